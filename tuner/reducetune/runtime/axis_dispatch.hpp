// Which point of the axis family answers a shape (outer, r, inner) in the runtime (issue 26,
// item 5): the caller's per-shape table when one of its entries answers, else the built-in
// rule below. Pure functions of the shape, so that both are tested without a GPU
// (tests/cpp/runtime/test_axis_dispatch.cpp, tests/python/test_reduce_axis_args.py).
//
// Axis tuning is not in the store yet, so a table comes from the caller (for example the
// benchmark's on-the-spot tune) as the labels of the points it measured at its shapes.
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

// The shape bucket a table entry answers: the same kind (rows: inner == 1; columns and
// middle axes: inner > 1) and the same log2 of r and of outer * inner, each rounded to the
// nearest integer, so that an entry tuned at a grid point answers the shapes within half an
// octave of it on both axes (DESIGN.md: shapes tuned on a log2 grid of r and outer x inner,
// rows and columns apart).
struct axis_bucket {
  bool rows = true;
  int log2_r = 0, log2_outputs = 0;
  friend bool operator==(const axis_bucket &, const axis_bucket &) = default;
};
[[nodiscard]] axis_bucket bucket_of(const reduction_shape &s);

// The entry for `s`: the entry of exactly this shape if there is one, else the first entry of
// the same bucket, else nullptr.
[[nodiscard]] const axis_entry *table_entry(const std::vector<axis_entry> &table,
                                            const reduction_shape &s);

// The built-in rule: a preset of kernel_templates/axis/family.json for a shape, and why.
// Every preset it names is batch_invariant (warp_rows_vec2 is never chosen by rule).
struct axis_rule_pick {
  std::string preset;
  std::string why;
};
[[nodiscard]] axis_rule_pick axis_rule(const reduction_shape &s);

// What reducer::reduce_axis launches for one shape on the current device, and why.
struct axis_choice {
  std::string source; // "table" (the caller's entry) | "rule" (the built-in rule)
  std::string preset; // the rule's preset ("" for a table entry)
  std::string why;    // the rule's reason, or the entry's shape
  std::string family, variant, launch;
  std::string determinism;      // run_to_run (every axis point)
  bool batch_invariant = false; // the family's let for this point
  std::uint64_t split = 1;      // blocks per output along r (> 1: a finish kernel)
  unsigned launches = 0, block = 0;
  std::uint64_t grid = 0, partials_bytes = 0;
};

} // namespace reducetune
