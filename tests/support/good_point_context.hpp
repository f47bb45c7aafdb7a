// What the runner's GPU tests of plumbing (its times, racing) measure: the tunable family's
// `good` preset at a float32 sum of 2^24 elements on this GPU, with a compiler and an
// evaluation cache of its own.
#pragma once

#include "gpu_context.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/space/space.hpp"

namespace rt_test {

struct good_point_context : gpu_context {
  reducetune::family f = reducetune::family::load(lib, "tunable");
  reducetune::search_space space{f, reducetune::dtype::float32, reducetune::reduce_op::sum,
                                 limits};
  reducetune::point p = space.base("good", reducetune::point_selection{}).value();
  reducetune::problem pr =
      reducetune::problem::whole_array(reducetune::dtype::float32, reducetune::reduce_op::sum,
                                       1ull << 24);
  reducetune::compiler jit{lib};
  reducetune::evaluation_cache cache;

  reducetune::evaluation run(const reducetune::evaluate_options &options) {
    return reducetune::evaluate(space, pr, p, {}, jit, device, options, cache);
  }
};

} // namespace rt_test
