// The axis call's batch_invariant level without a GPU (runtime/axis_dispatch.hpp, issue 26
// item 3): under it the built-in rule's choice for a row (an output) depends on r and inner
// alone, so the same row gets the same point, and therefore the same reduction order, in a
// batch of 1, 7, 4096 or 2^20 rows, on both sides of every r boundary the rule has; every
// point it names is batch_invariant by the axis family's own let, for every type and
// operator; an unknown level is refused by name.
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/runtime/axis_dispatch.hpp"
#include "reducetune/runtime/reducer.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <set>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

constexpr auto invariant = axis_determinism::batch_invariant;
const std::uint64_t batches[] = {1, 7, 4096, 1ull << 20};

// Both sides of each r boundary of the rule (rows: 16, 256, 2^14, 2^18; columns: 8, 2^14).
const std::uint64_t row_lengths[] = {1,   2,       8,           9,           16,
                                     17,  255,     256,         257,         1ull << 14,
                                     (1ull << 14) + 1, 1ull << 16, 1ull << 18, (1ull << 18) + 1,
                                     1ull << 22};
const std::uint64_t column_lengths[] = {2, 8, 9, 1000, (1ull << 14) - 1, 1ull << 14, 1ull << 20};
// Both sides of each inner boundary (16 columns: tile widths; 2^14: a thread per output).
const std::uint64_t inners[] = {1, 2, 15, 16, 17, 64, (1ull << 14) - 1, 1ull << 14};

std::set<std::string> invariant_presets() {
  std::set<std::string> named;
  for (const auto inner : inners)
    for (const auto r : inner == 1 ? std::vector<std::uint64_t>(std::begin(row_lengths),
                                                                std::end(row_lengths))
                                   : std::vector<std::uint64_t>(std::begin(column_lengths),
                                                                std::end(column_lengths)))
      for (const auto outer : batches)
        named.insert(axis_rule({outer, r, inner}, invariant).preset);
  return named;
}

} // namespace

TEST_CASE("under batch_invariant the axis rule gives a row the same point in every batch size",
          "[runtime][axis]") {
  for (const auto inner : inners) {
    const auto &lengths = inner == 1 ? std::vector<std::uint64_t>(std::begin(row_lengths),
                                                                  std::end(row_lengths))
                                     : std::vector<std::uint64_t>(std::begin(column_lengths),
                                                                  std::end(column_lengths));
    for (const auto r : lengths) {
      const std::string alone = axis_rule({1, r, inner}, invariant).preset;
      for (const auto outer : batches) {
        INFO("outer " << outer << " r " << r << " inner " << inner);
        CHECK(axis_rule({outer, r, inner}, invariant).preset == alone);
      }
    }
  }
}

TEST_CASE("the run_to_run rule looks at the batch size where batch_invariant does not",
          "[runtime][axis]") {
  // why the level exists: long rows and tall columns change point with outer by default
  CHECK(axis_rule({1, 1 << 16, 1}).preset != axis_rule({1 << 12, 1 << 16, 1}).preset);
  CHECK(axis_rule({1, 1000, 64}).preset != axis_rule({1 << 12, 1000, 64}).preset);
  CHECK(axis_rule({1, 1 << 16, 1}, invariant).preset ==
        axis_rule({1 << 12, 1 << 16, 1}, invariant).preset);
  // the run_to_run default is unchanged where the choice depends on r alone already
  CHECK(axis_rule({7, 100, 1}).preset == axis_rule({7, 100, 1}, invariant).preset);
}

TEST_CASE("under batch_invariant long rows change point only at the stated r boundaries",
          "[runtime][axis]") {
  CHECK(axis_rule({1, 1 << 14, 1}, invariant).preset == "warp_rows");
  CHECK(axis_rule({1, (1 << 14) + 1, 1}, invariant).preset == "block_rows");
  CHECK(axis_rule({1, 1 << 18, 1}, invariant).preset == "block_rows");
  CHECK(axis_rule({1, (1 << 18) + 1, 1}, invariant).preset == "split_long_rows");
  CHECK(axis_rule({1, (1 << 14) - 1, 64}, invariant).preset == "tile_columns");
  CHECK(axis_rule({1, 1 << 14, 64}, invariant).preset == "tile_columns_split");
  CHECK(axis_rule({1, 1 << 14, 4}, invariant).preset == "tile_few_columns");
}

TEST_CASE("every point the batch_invariant rule names is batch_invariant by the family's let",
          "[runtime][axis]") {
  const auto named = invariant_presets();
  CHECK(named.size() == 9); // every preset but warp_rows_vec2: each kind of point, not one
  const family f = family::load(template_library::embedded(), "axis");
  for (const dtype t : {dtype::int32, dtype::int64, dtype::float32, dtype::float64,
                        dtype::float16, dtype::bfloat16})
    for (const reduce_op o : {reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod}) {
      const search_space s(f, t, o, device_limits::for_arch("sm_90"));
      for (const auto &name : named) {
        INFO(name << " " << to_string(t) << " " << to_string(o));
        const auto p = s.base(name, {false, true}); // what the runtime launches for it
        REQUIRE(p);
        auto sc = s.scope_for(p->compile, p->launch);
        CHECK(expression::parse("batch_invariant").eval_int(sc) == 1);
      }
    }
}

TEST_CASE("the axis determinism levels are named, run_to_run by default, others refused",
          "[runtime][axis]") {
  CHECK(reducer_options{}.axis_level == axis_determinism::run_to_run);
  for (const auto d : {axis_determinism::run_to_run, invariant})
    CHECK(axis_determinism_from(to_string(d)) == d);
  for (const char *bad : {"", "batch-invariant", "Batch_Invariant", "nondeterministic"})
    CHECK_THROWS_AS(axis_determinism_from(bad), invalid_configuration);
}
