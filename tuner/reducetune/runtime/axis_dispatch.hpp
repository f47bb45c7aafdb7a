// Which point of the axis family answers a shape (outer, r, inner) in the runtime (issue 26,
// item 5): the caller's per-shape table when one of its entries answers, else the table of
// this device in the results file or export the reducer was made from (runtime/axis_tables.hpp),
// else the built-in rule below. Which entry of a table answers a shape is the rule of
// db/shape_rule.hpp (the nearest tuned shape, rows and columns apart), the one the exported
// header's select_axis() runs. Pure functions of the shape, so that all of it is tested without
// a GPU (tests/cpp/runtime/test_axis_dispatch.cpp, tests/cpp/runtime/test_axis_tables.cpp).
#pragma once

#include "reducetune/space/problem.hpp"

#include <string>
#include <vector>

namespace reducetune {

// A point of the axis family measured (or chosen) for one shape, named by its labels as the
// store names a point (db/point_records.hpp stored_point reads them back).
struct axis_entry {
  reduction_shape shape;
  std::string variant, launch;
};

// The coordinates db/shape_rule.hpp measures distance in: the kind (rows: inner == 1; columns
// and middle axes: inner > 1) and log2 of r and of outer * inner, each rounded to the nearest
// integer (DESIGN.md: shapes tuned on a log2 grid of r and outer x inner, rows and columns
// apart). Shapes of one bucket are at distance 0 of each other.
struct axis_bucket {
  bool rows = true;
  int log2_r = 0, log2_outputs = 0;
  friend bool operator==(const axis_bucket &, const axis_bucket &) = default;
};
[[nodiscard]] axis_bucket bucket_of(const reduction_shape &s);

// The entry for `s` by db/shape_rule.hpp: the entry of exactly this shape, else the nearest of
// its kind (ties to the larger r, then more outputs, then the earlier entry); nullptr when the
// table holds no entry of its kind.
[[nodiscard]] const axis_entry *table_entry(const std::vector<axis_entry> &table,
                                            const reduction_shape &s);

// The determinism an axis call promises (issue 26, item 3). run_to_run (the default): the same
// call on the same shape gives the same bits (no axis point uses atomics). batch_invariant,
// opt-in: a row's (an output's) result does not depend on how many rows are reduced with it,
// so the point that reduces it is chosen from r and inner alone, never from outer, and only
// among points whose family let `batch_invariant` is 1.
enum class axis_determinism { run_to_run, batch_invariant };
// Every level, the default first: what axis_determinism_from accepts (Python asks it once).
inline constexpr axis_determinism axis_determinisms[] = {axis_determinism::run_to_run,
                                                         axis_determinism::batch_invariant};
[[nodiscard]] std::string to_string(axis_determinism d);
// invalid_configuration, in one line naming the levels, for any other name.
[[nodiscard]] axis_determinism axis_determinism_from(const std::string &name);

// The built-in rule: a preset of kernel_templates/axis/family.json for a shape, and why.
// Every preset it names is batch_invariant (warp_rows_vec2 is never chosen by rule), but
// under run_to_run the choice itself looks at outer (rows over 2^14 elements: a block per
// row or 32 blocks per row by their count; columns: split r or not by the tiles), so one row
// may be reduced in another order in a larger batch. Under batch_invariant it looks at r and
// inner only: rows of 2^14 to 2^18 elements get a block each, longer ones 32 blocks each;
// columns split r (8 or 512 blocks) only from r = 2^14 on, where the partials stay within
// 1/32 of the input however many outputs there are. The element type matters only for short
// staged rows: 2-byte types read them with 16-byte loads (staged_short_rows_vec8), which 4- and
// 8-byte types cannot (vec 8 is valid for the 2-byte types only).
struct axis_rule_pick {
  std::string preset;
  std::string why;
};
[[nodiscard]] axis_rule_pick axis_rule(const reduction_shape &s,
                                       axis_determinism d = axis_determinism::run_to_run,
                                       dtype t = dtype::float32);

// What reducer::reduce_axis launches for one shape on the current device, and why.
struct axis_choice {
  // "table" (the caller's entry) | "tuned" (the results file's or export's point for this
  // device) | "rule" (the built-in rule)
  std::string source;
  std::string preset; // the rule's preset ("" for a table entry)
  std::string why;    // the rule's reason, or the entry's shape
  std::string family, variant, launch;
  std::string determinism;      // the point's: run_to_run (every axis point)
  std::string level;            // the call's axis_determinism: run_to_run | batch_invariant
  bool batch_invariant = false; // the family's let for this point
  std::uint64_t split = 1;      // blocks per output along r (> 1: a finish kernel)
  unsigned launches = 0, block = 0;
  std::uint64_t grid = 0, partials_bytes = 0;
};

} // namespace reducetune
