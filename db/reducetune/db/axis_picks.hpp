// The axis family's answers of a Catalog table (issue 26, items 4 and 5), as both exports print
// them and the runtime takes them from a results file: per tuned shape, the fastest point, and
// the fastest batch_invariant one (the family's `batch_invariant` let, asked of the search
// space), which a call that asks for batch_invariant takes instead. Which shape answers an
// untuned one: db/shape_rule.hpp.
#pragma once

#include "reducetune/db/catalog.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/space/problem.hpp"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace reducetune {
class template_library;
}

namespace reducetune::db {

// What an application needs to launch an axis point (the axis ABI: in, out, outer, r, inner,
// partials; docs/kernels.md, "Axis family") at its tuned shape, computed by the search space.
struct axis_launch_rule {
  unsigned block_size = 0;
  std::string grid_expression; // the family's, over the built-ins outer, r, inner
  std::uint64_t grid = 0;      // its value at the tuned shape
  std::uint64_t split = 1;     // blocks per output along r (> 1: the final kernel finishes)
  bool batch_invariant = false; // the family's let: a row's order is chosen from r alone
  std::vector<kernel_ref> kernels; // in launch order
};

// The rule of a Catalog entry measured at `shape` on device d, with the families of lib; a
// text saying why when there is none (a family lib lacks, a label that no longer parses, a
// point of another ABI). Lowered names: the stored build's, else `lowered`'s, else empty.
[[nodiscard]] std::variant<axis_launch_rule, std::string>
axis_launch_rule_of(const template_library &lib, const device_record &d, const catalog_entry &e,
                    const reduction_shape &shape, const lowered_names_fn &lowered = {});

struct axis_pick {
  reduction_shape shape;
  const catalog_entry *fastest = nullptr;
  // The fastest batch_invariant point of the shape: fastest itself when it is one, nullptr
  // when the shape has none (a batch_invariant call then leaves the shape out).
  const catalog_entry *invariant = nullptr;
};

// One pick per shape of t, in t's order (by shape). The entries point into t.
[[nodiscard]] std::vector<axis_pick> axis_picks(const catalog_axis_table &t,
                                                const device_record &d,
                                                const template_library &lib);

} // namespace reducetune::db
