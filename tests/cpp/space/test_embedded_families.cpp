#include "catch.hpp"

#include "reducetune/templates/template_library.hpp"
#include "reducetune/space/space.hpp"

#include <iostream>

using namespace reducetune;

// Every family shipped in kernel_templates/ must load, and each of its presets must be a valid
// point (compile-time and launch) for at least one element type and operator on sm_90; a
// preset meant for some types only (4-byte loads, integer-only warp reductions) is invalid for
// the others, which is reported, not failed.
TEST_CASE("every embedded family loads and each preset is a valid point", "[space]") {
  const auto lib = template_library::embedded();
  const auto families = family::load_all(lib);
  REQUIRE(!families.empty());
  const auto limits = device_limits::for_arch("sm_90");
  for (const auto &f : families) {
    INFO("family " << f.name);
    CHECK(f.kernels.count("pass") == 1);
    for (const auto &p : f.presets) {
      INFO("preset " << p.name);
      int valid_for = 0;
      std::string invalid_for;
      for (dtype t : all_dtypes)
        for (reduce_op o : all_ops) {
          const search_space s(f, t, o, limits);
          const auto presets = s.presets();
          const auto &pp = presets.at(static_cast<std::size_t>(&p - f.presets.data()));
          const auto result = s.check(pp.point, pp.launch);
          if (!result) {
            invalid_for += std::string(" ") + to_string(t) + "." + to_string(o);
            continue;
          }
          ++valid_for;
          CHECK(parse_variant_label(f, to_label(f, pp.point)) == pp.point);
          const auto plan = s.plan_launch(pp.point, pp.launch);
          CHECK(plan.block_size >= 1);
          CHECK(plan.kernels.count("pass") == 1);
          for (std::uint64_t n : {1ull, 1000ull, 1ull << 24})
            CHECK(plan.grid_for(n) >= 1);
        }
      CHECK(valid_for > 0);
      if (!invalid_for.empty())
        std::cout << f.name << "." << p.name << " is not a point for:" << invalid_for << "\n";
    }
  }
}

TEST_CASE("every embedded family has valid points for every type and operator", "[space]") {
  const auto lib = template_library::embedded();
  for (const auto &f : family::load_all(lib))
    for (dtype t : all_dtypes)
      for (reduce_op o : all_ops) {
        INFO(f.name << " " << to_string(t) << "." << to_string(o));
        const search_space s(f, t, o, device_limits::for_arch("sm_90"));
        CHECK(s.valid_size() <= s.size());
        if (is_half(t) && f.name != "tunable" && f.name != "axis") {
          // Families that reduce in the element type refuse the half types by a constraint
          // that says why (half types accumulate in float32): none of their points is valid.
          CHECK(s.valid_size() == 0);
          for (const auto &preset : s.presets())
            CHECK(s.check(preset.point, preset.launch).reasons().find("16 bits") !=
                  std::string::npos);
          continue;
        }
        CHECK(s.valid_size() > 0);
      }
}

TEST_CASE("the test-only families load and declare the outcome they are built for", "[space]") {
  // They include common/ from the shipped library, so they are laid over it.
  const auto test_only =
      template_library::from_directory(std::string(RT_TEST_DATA_DIR) + "/templates");
  const auto lib =
      template_library::embedded_with(std::string(RT_TEST_DATA_DIR) + "/templates");
  std::vector<family> families;
  for (const auto &name : test_only.families())
    families.push_back(family::load(lib, name));
  REQUIRE(!families.empty());
  for (const auto &f : families) {
    INFO("family " << f.name);
    CHECK(!f.expected.empty());
  }
}
