// What the no-GPU tests of evaluate(space, problem, point) share: a compiler over the embedded
// templates, a device_info that names no GPU (so a runner that reaches the device fails as
// device_error, never as invalid_configuration), and the failure a call must return.
#pragma once

#include "catch.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/templates/template_library.hpp"

#include <variant>

namespace rt_test {

struct evaluate_fixture {
  reducetune::template_library lib = reducetune::template_library::embedded();
  reducetune::compiler jit{lib};
  reducetune::device_info no_gpu{};
  reducetune::evaluation_cache cache;

  reducetune::evaluation run(const reducetune::search_space &s, const reducetune::problem &pr,
                             const reducetune::point &p) {
    return evaluate(s, pr, p, reducetune::input_data{}, jit, no_gpu,
                    reducetune::evaluate_options{}, cache);
  }
};

inline reducetune::failure failed(const reducetune::evaluation &e) {
  REQUIRE(std::holds_alternative<reducetune::failure>(e));
  return std::get<reducetune::failure>(e);
}

} // namespace rt_test
