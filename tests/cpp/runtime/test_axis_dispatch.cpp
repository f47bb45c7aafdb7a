// The runtime's axis call without a GPU (runtime/axis_dispatch.hpp): the built-in rule names,
// for each kind of shape, the preset its comment states, and every preset it can name is a
// valid, batch_invariant point of the axis family for every type and operator; a per-shape
// table answers its own shape, else its nearest shape of the same kind (db/shape_rule.hpp,
// tested in full in tests/cpp/db/test_db_shape_rule.cpp); an empty extent is refused before
// any device is touched.
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/runtime/axis_dispatch.hpp"
#include "reducetune/runtime/reducer.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <set>

using namespace reducetune;

namespace {

// The limits of compute capability 9.0 (H100, H200), what the space checks a point against.
device_limits hopper() { return device_limits::for_arch("sm_90"); }

} // namespace

TEST_CASE("the axis rule picks the stated preset for each kind of shape", "[runtime][axis]") {
  struct expect {
    reduction_shape shape;
    const char *preset;
  };
  const expect cases[] = {
      {{1 << 24, 4, 1}, "staged_short_rows"},   // rows of 4: whole rows staged
      {{1 << 23, 8, 1}, "staged_short_rows"},   // rows of 8
      {{1 << 22, 16, 1}, "staged_short_rows"},  // the last staged row
      {{1 << 22, 17, 1}, "group_short_rows"},   // one more element: 8 lanes per row
      {{1 << 21, 32, 1}, "group_short_rows"},   // rows of 32
      {{1 << 18, 256, 1}, "group_short_rows"},  // the last short row
      {{1 << 18, 257, 1}, "warp_rows"},         // one more element: a warp per row
      {{1 << 16, 1024, 1}, "warp_rows"},
      {{1024, 1 << 16, 1}, "block_rows"},       // long rows, enough to fill the GPU
      {{512, 1 << 15, 1}, "block_rows"},
      {{511, 1 << 15, 1}, "split_long_rows"},   // one row fewer: split r
      {{16, 1 << 22, 1}, "split_long_rows"},
      {{1, 1 << 24, 1}, "split_long_rows"},     // the whole array as one row
      {{1, 64, 1 << 20}, "thread_columns"},     // many columns
      {{1, 4, 4096}, "thread_columns"},         // r of a few elements
      {{1, 1 << 14, 4096}, "tile_columns_split"},
      {{1 << 10, 1024, 64}, "tile_columns"},    // a middle axis with many tiles
      {{1, 1 << 20, 64}, "tile_columns_split"},
      {{1, 1 << 24, 4}, "tile_few_columns"},    // a handful of columns of a tall matrix
      {{1, 1 << 21, 15}, "tile_few_columns"},
  };
  for (const auto &c : cases) {
    INFO("(" << c.shape.outer << ", " << c.shape.r << ", " << c.shape.inner << ")");
    const auto pick = axis_rule(c.shape);
    CHECK(pick.preset == c.preset);
    CHECK_FALSE(pick.why.empty());
  }
}

TEST_CASE("every preset the axis rule names is a valid batch_invariant point for every type and "
          "operator",
          "[runtime][axis]") {
  std::set<std::string> named;
  for (std::uint64_t r = 1; r <= (1ull << 24); r *= 2)
    for (std::uint64_t m = 1; m <= (1ull << 24); m *= 4) {
      named.insert(axis_rule({m, r, 1}).preset);
      named.insert(axis_rule({1, r, m + 1}).preset);
      named.insert(axis_rule({m, r, 3}).preset);
    }
  CHECK(named.size() == 9); // every preset but warp_rows_vec2 (not batch_invariant)
  const auto lib = template_library::embedded();
  const family f = family::load(lib, "axis");
  for (const dtype t : {dtype::int32, dtype::int64, dtype::float32, dtype::float64,
                        dtype::float16, dtype::bfloat16})
    for (const reduce_op o : {reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod}) {
      const search_space s(f, t, o, hopper());
      for (const auto &name : named) {
        INFO(name << " " << to_string(t) << " " << to_string(o));
        const auto p = s.base(name, {false, true});
        REQUIRE(p);
        CHECK(s.check(*p).ok());
        CHECK(variant_label(f, *p).find(".s_") != std::string::npos);
        // the preset itself, not a substitute: base() falls back only for an invalid preset
        bool is_preset = false;
        for (const auto &pp : s.presets())
          is_preset |= pp.name == name && pp.point == p->compile;
        CHECK(is_preset);
        auto sc = s.scope_for(p->compile, p->launch);
        CHECK(expression::parse("batch_invariant").eval_int(sc) == 1);
      }
    }
}

TEST_CASE("short rows of the 2-byte types get 16-byte loads: a preset valid for them only",
          "[runtime][axis]") {
  const auto lib = template_library::embedded();
  const family f = family::load(lib, "axis");
  for (const auto level : axis_determinisms)
    for (const std::uint64_t r : {2, 8, 16, 17}) {
      const reduction_shape shape{1 << 20, r, 1};
      for (const dtype t : {dtype::float16, dtype::bfloat16}) {
        const auto pick = axis_rule(shape, level, t);
        INFO(to_string(t) << " r=" << r << " " << to_string(level));
        CHECK(pick.preset == (r <= 16 ? "staged_short_rows_vec8" : "group_short_rows"));
        const search_space s(f, t, reduce_op::sum, hopper());
        const auto p = s.base(pick.preset, {false, true});
        REQUIRE(p);
        CHECK(s.check(*p).ok());
        auto sc = s.scope_for(p->compile, p->launch);
        CHECK(expression::parse("batch_invariant").eval_int(sc) == 1);
        CHECK(expression::parse("vec").eval_int(sc) == (r <= 16 ? 8 : 1));
      }
      for (const dtype t : {dtype::int32, dtype::float32, dtype::float64, dtype::int64})
        CHECK(axis_rule(shape, level, t).preset == axis_rule(shape, level).preset);
      // vec 8 is refused for the wider types (base() substitutes another preset): the rule
      // must not name it for them
      const search_space wide(f, dtype::float32, reduce_op::sum, hopper());
      const auto sub = wide.base("staged_short_rows_vec8", {false, true});
      REQUIRE(sub);
      auto wsc = wide.scope_for(sub->compile, sub->launch);
      CHECK(expression::parse("vec").eval_int(wsc) != 8);
    }
}

TEST_CASE("a per-shape table answers its shape, else its nearest shape of the same kind",
          "[runtime][axis]") {
  const std::vector<axis_entry> table = {
      {{1 << 16, 1024, 1}, "rows-1024", ""},
      {{1 << 16, 1000, 1}, "rows-1000", ""},
      {{1, 1024, 1 << 16}, "columns-1024", ""},
  };
  // the exact shape first, though an earlier entry shares its bucket
  REQUIRE(table_entry(table, {1 << 16, 1000, 1}) != nullptr);
  CHECK(table_entry(table, {1 << 16, 1000, 1})->variant == "rows-1000");
  // else the nearest (db/shape_rule.hpp); both row entries are at the same distance, and the
  // larger r answers
  CHECK(table_entry(table, {1 << 16, 1400, 1})->variant == "rows-1024");
  CHECK(table_entry(table, {50000, 800, 1})->variant == "rows-1024");
  CHECK(table_entry(table, {1 << 16, 1500, 1})->variant == "rows-1024"); // an octave away
  CHECK(table_entry(table, {1 << 17, 1 << 20, 1})->variant == "rows-1024");
  CHECK(table_entry(table, {1, 1024, 60000})->variant == "columns-1024");
  CHECK(table_entry(table, {256, 1024, 256})->variant == "columns-1024"); // a middle axis
  // the whole array is a row shape (1, n, 1); without a column entry, columns get the rule
  CHECK(table_entry(table, {1, 1024, 1})->variant == "rows-1024");
  CHECK(table_entry({table[0]}, {1, 1024, 4}) == nullptr);
  CHECK(bucket_of({1 << 16, 1024, 1}) == axis_bucket{true, 10, 16});
  CHECK(bucket_of({2, 3, 5}) == axis_bucket{false, 2, 3}); // log2 3 = 1.58, log2 10 = 3.32
}

TEST_CASE("an axis call with an empty extent is refused before any device is touched",
          "[runtime][axis]") {
  auto r = reducer::untuned(dtype::float32, reduce_op::sum);
  for (const reduction_shape s : {reduction_shape{0, 4, 1}, reduction_shape{4, 0, 1},
                                  reduction_shape{4, 4, 0}})
    CHECK_THROWS_AS(r.reduce_axis(nullptr, s, nullptr), invalid_configuration);
  CHECK_THROWS_AS(r.choice_axis({1, 0, 1}), invalid_configuration);
}
