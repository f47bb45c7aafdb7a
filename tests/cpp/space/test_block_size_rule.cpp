// The block-size rule has one source: the space's built-in device limit (block_size <=
// max_threads_per_block, space.cpp's check_builtins), which holds for every family, users'
// included. No family.json restates it, and every embedded family's presets are refused by
// that one rule on a device with fewer threads per block. No GPU.
#include "catch.hpp"

#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <string>

using namespace reducetune;

TEST_CASE("no family restates the block-size limit the space decides", "[space][block_size]") {
  for (const auto &f : family::load_all(template_library::embedded())) {
    INFO("family " << f.name);
    for (const auto &c : f.constraints)
      CHECK(c.expr.text().find("max_threads_per_block") == std::string::npos);
  }
}

TEST_CASE("every embedded family's presets are refused by the built-in block-size limit",
          "[space][block_size]") {
  device_limits small = device_limits::for_arch("sm_90");
  small.max_threads_per_block = 16; // below every declared block size
  for (const auto &f : family::load_all(template_library::embedded())) {
    if (f.find_parameter("block_size") == nullptr) continue;
    const search_space s(f, dtype::int32, reduce_op::sum, small);
    for (const auto &p : s.presets()) {
      INFO("family " << f.name << ", preset " << p.name);
      const auto r = s.check(p.point, p.launch);
      bool refused_for_threads = false;
      for (const auto &failure : r.failures)
        refused_for_threads =
            refused_for_threads || failure.expr == "block_size <= max_threads_per_block";
      CHECK(refused_for_threads);
    }
  }
}
