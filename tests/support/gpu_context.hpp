// What a GPU test starts from: the device it runs on (the GPU tests' main has skipped the run
// where there is none), the limits its search spaces are built for, and the embedded template
// library. A test that needs more (a family, a compiler) derives from it.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/templates/template_library.hpp"

namespace rt_test {

struct gpu_context {
  reducetune::device_info device = reducetune::query_device();
  reducetune::device_limits limits = reducetune::limits_of(device);
  reducetune::template_library lib = reducetune::template_library::embedded();
};

} // namespace rt_test
