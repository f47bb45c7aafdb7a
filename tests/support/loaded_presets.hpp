// A family's presets that are valid for a search space's type and operator, compiled with
// NVRTC and loaded on the test's device: what a GPU test of a family runs (gpu_test_half*).
// Presets a constraint refuses (e.g. the atomic finish for a half type) are left out; a test
// that expects every preset compares the count with the family's.
#pragma once

#include "gpu_context.hpp"

#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"

#include <memory>
#include <string>
#include <vector>

namespace rt_test {

struct loaded_point {
  std::string label; // the preset's name
  reducetune::point p;
  std::unique_ptr<reducetune::loaded_module> module;
};

inline std::vector<loaded_point> load_valid_presets(const gpu_context &g,
                                                    const reducetune::family &f,
                                                    const reducetune::search_space &s) {
  std::vector<loaded_point> out;
  reducetune::compiler c(g.lib);
  for (const auto &pp : s.presets()) {
    if (!s.check(pp.point, pp.launch)) continue;
    const auto program = c.compile(reducetune::request_for(f, pp.point, g.limits.arch));
    out.push_back({pp.name, reducetune::point{pp.point, pp.launch},
                   std::make_unique<reducetune::loaded_module>(*program)});
  }
  return out;
}

} // namespace rt_test
