#include "reducetune/runtime/axis_dispatch.hpp"

#include "reducetune/db/shape_rule.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/space/element.hpp"

namespace reducetune {
namespace {

// Thresholds of the rule. Evidence: the presets' hot bandwidth on an H200, float32 sum of
// 2^26 elements (docs/kernels.md, "Axis family", 2026-11-26): thread_columns 72 % at rows of
// 4 and 82 % at 2^20 columns; group_short_rows best at rows of 32; warp_rows 80 % at rows of
// 1024; block_rows 80 % for 1024 rows of 2^16; split_long_rows 78 % for 16 rows of 2^22;
// tile_few_columns 72 % for 4 columns; tile_columns_split 57 % for 4096 columns.
constexpr std::uint64_t few = 8;              // r at most this: a thread per output
// Rows up to this: staged_short_rows (axis_staged.cuh), which reads whole rows with coalesced
// vector loads where a thread per row (54 % of the peak at rows of 2, H200) and sub-warp groups
// (52 % at rows of 16) issue loads whose lanes lie a row apart. Measured on an H100
// (docs/results/h100_2026-11-26_axis_gpu_tests, scripts/device-jobs/axis_short_rows.py):
// staged_short_rows 79-83 % of the peak at rows of 2, 8 and 16 in float32 against
// thread_columns' 54-77 %; in bfloat16 58 %, where staged with vec 8 (16-byte loads) reaches
// 73 %: the 2-byte types get staged_short_rows_vec8 (vec 8 is not valid for 4- and 8-byte
// types).
constexpr std::uint64_t staged_row = 16;
constexpr std::uint64_t short_row = 256;      // rows up to this: sub-warp groups of 8 lanes
constexpr std::uint64_t warp_row = 1u << 14;  // rows up to this: a warp per row
constexpr std::uint64_t fill_blocks = 512;    // blocks that keep an H100 / H200 busy (132 SMs)
constexpr std::uint64_t many_columns = 1u << 14; // each k a coalesced read across a block
constexpr std::uint64_t tile_width = 64;      // tile_columns' columns per tile (32 lanes x 2)
constexpr std::uint64_t narrow = 16;          // fewer columns: 4-column tiles, split 512
// batch_invariant only (r alone): from here a row is long enough for 32 blocks of 8192
// elements (split_long_rows 78 % for 16 rows of 2^22), below it a block per row (block_rows
// 80 % for 1024 rows of 2^16); columns split r only from 2^14 on, so that the partials
// (outputs x 512 at most) stay within 1/32 of the input whatever outer is.
constexpr std::uint64_t split_row = 1u << 18;
constexpr std::uint64_t split_column = 1u << 14;

axis_rule_pick row_rule(const reduction_shape &s, dtype t) {
  if (s.r <= staged_row && size_of(t) == 2)
    return {"staged_short_rows_vec8", "rows of at most 16 elements of a 2-byte type: whole rows "
                                      "staged through shared memory with 16-byte loads"};
  if (s.r <= staged_row)
    return {"staged_short_rows", "rows of at most 16 elements: whole rows staged through "
                                 "shared memory, a thread per row"};
  if (s.r <= short_row)
    return {"group_short_rows", "rows of 17 to 256 elements: 8 lanes per row"};
  if (s.r <= warp_row)
    return {"warp_rows", "rows of 257 to 2^14 elements: a warp per row"};
  if (s.outer >= fill_blocks)
    return {"block_rows", "rows over 2^14 elements, at least 512 of them: a block per row"};
  return {"split_long_rows", "fewer than 512 rows over 2^14 elements: 32 blocks per row"};
}

axis_rule_pick column_rule(const reduction_shape &s) {
  if (s.r <= few || s.inner >= many_columns)
    return {"thread_columns", "at least 2^14 columns, or r of at most 8: a thread per output"};
  if (s.outer * ((s.inner + tile_width - 1) / tile_width) >= fill_blocks)
    return {"tile_columns", "at least 512 tiles of 64 columns: no split of r needed"};
  if (s.inner >= narrow)
    return {"tile_columns_split", "16 columns or more, too few tiles: 16-column tiles, r split 8"};
  return {"tile_few_columns", "fewer than 16 columns, too few tiles: 4-column tiles, r split 512"};
}

axis_rule_pick invariant_row_rule(const reduction_shape &s, dtype t) {
  if (s.r <= warp_row)
    return row_rule(s, t); // r alone already
  if (s.r <= split_row)
    return {"block_rows", "batch_invariant rows of 2^14 to 2^18 elements: a block per row"};
  return {"split_long_rows", "batch_invariant rows over 2^18 elements: 32 blocks per row"};
}

axis_rule_pick invariant_column_rule(const reduction_shape &s) {
  if (s.r <= few || s.inner >= many_columns)
    return column_rule(s); // r and inner alone already
  if (s.r < split_column)
    return {"tile_columns", "batch_invariant, r under 2^14: tiles of 64 columns, no split"};
  if (s.inner >= narrow)
    return {"tile_columns_split", "batch_invariant, r of 2^14 or more, 16 columns or more: "
                                  "16-column tiles, r split 8"};
  return {"tile_few_columns", "batch_invariant, r of 2^14 or more, fewer than 16 columns: "
                              "4-column tiles, r split 512"};
}

} // namespace

std::string to_string(axis_determinism d) {
  return d == axis_determinism::batch_invariant ? "batch_invariant" : "run_to_run";
}

axis_determinism axis_determinism_from(const std::string &name) {
  for (const auto d : axis_determinisms)
    if (to_string(d) == name)
      return d;
  throw invalid_configuration("unknown axis determinism '" + name +
                              "': run_to_run (the default) or batch_invariant");
}

axis_bucket bucket_of(const reduction_shape &s) {
  return {s.inner == 1, db::rounded_log2(s.r), db::rounded_log2(s.outer * s.inner)};
}

const axis_entry *table_entry(const std::vector<axis_entry> &table, const reduction_shape &s) {
  std::vector<reduction_shape> shapes;
  shapes.reserve(table.size());
  for (const auto &e : table)
    shapes.push_back(e.shape);
  const auto i = db::nearest_shape_index(shapes, s);
  return i ? &table[*i] : nullptr;
}

axis_rule_pick axis_rule(const reduction_shape &s, axis_determinism d, dtype t) {
  if (d == axis_determinism::batch_invariant)
    return s.inner == 1 ? invariant_row_rule(s, t) : invariant_column_rule(s);
  return s.inner == 1 ? row_rule(s, t) : column_rule(s);
}

} // namespace reducetune
