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
#include <optional>
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
  // > 0 (tile_ticket: the family's ticket_columns let, split > 1): the pass finishes its split,
  // one counter per tile of this many columns after the partials (measure/axis_launch.hpp), so
  // no final kernel is launched (nor listed in kernels).
  std::uint64_t ticket_columns = 0;
};

// The rule of a Catalog entry measured at `shape` on device d, with the families of lib; a
// text saying why when there is none (a family lib lacks, a label that no longer parses, a
// point of another ABI). Lowered names: the stored build's, else `lowered`'s, else empty.
[[nodiscard]] std::variant<axis_launch_rule, std::string>
axis_launch_rule_of(const template_library &lib, const device_record &d, const catalog_entry &e,
                    const reduction_shape &shape, const lowered_names_fn &lowered = {});

// A shape's picks. Where `reducetune calibrate` timed the shape's points as an application
// calls them, a level's pick is the one of least lone-call time among its timed points
// (measured_pick, application_ranking.hpp: near-ties to the better replayed median); else the
// fastest replayed median.
struct axis_pick {
  reduction_shape shape;
  const catalog_entry *fastest = nullptr; // the run_to_run level's: any point of the shape
  // The batch_invariant level's, compared with batch_invariant points only: nullptr when the
  // shape has none (a batch_invariant call then leaves the shape out).
  const catalog_entry *invariant = nullptr;
};

// One pick per shape of t, in t's order (by shape). The entries point into t.
[[nodiscard]] std::vector<axis_pick> axis_picks(const catalog_axis_table &t,
                                                const device_record &d,
                                                const template_library &lib);
// axis_pick::fastest of a shape's ranked points (asks no search space).
[[nodiscard]] const catalog_entry &run_to_run_pick(const std::vector<catalog_entry> &ranked);
// `best` for a shape: the run_to_run pick of the tuned shape of t that answers `wanted`
// (shape_rule.hpp), with its calibrated lone call (nullopt: not calibrated); nullopt when t
// holds no shape of its kind.
struct axis_answer {
  best_choice best;
  std::optional<double> application_s;
};
[[nodiscard]] std::optional<axis_answer> axis_best(const catalog_axis_table &t,
                                                   const reduction_shape &wanted);

} // namespace reducetune::db
