// reducetune-bench's table mode: the streaming ceiling measured once, then for every run,
// dtype and size each variant and CUB measured on one shared input, the report rewritten after
// every size and written in full (and as JSON) at the end.
#pragma once

#include "bench/options.hpp"

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/jit/compiler.hpp"

namespace reducetune::bench {

// Returns the exit status: 0, or 1 when --repeat found a difference over the limit (FAIL).
int run_table(const options &o, const device_info &device, compiler &comp);

} // namespace reducetune::bench
