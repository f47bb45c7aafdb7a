// Launching a point of a family with the axis kernel ABI (docs/architecture.md, "Kernel ABI",
// the axis ABI) on one shape (outer, r, inner): the pass over the family's grid, then, when
// the point splits r across blocks, the deterministic finish over its partials (in the pass
// itself for a point whose family lets `ticket_columns`: tile_ticket, one launch).
//
// A first step of issue 26, beside the whole-array runner rather than in it: the search space
// and the runner do not know shapes yet (space/space.hpp binds only `n` in a grid), so the
// shape is bound here, where a GPU test (tests/cpp/gpu_test_axis.cpp) launches the family.
// The facts the family declares for a point (its ABI, the split of r, batch invariance) are
// read from the point's scope, never re-derived.
#pragma once

#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace reducetune {

struct axis_plan {
  reduction_shape shape;
  unsigned block_size = 0;
  std::uint64_t grid = 0;  // the pass's grid: the family's `grid` at this shape
  std::uint64_t split = 1; // blocks per output along r; > 1 finishes (final_pass or a ticket)
  // Partials per output: the non-empty chunks of the split (kernel_templates/axis/
  // axis_acc.cuh, split_row), at most split and at most r; 0 when split == 1.
  std::uint64_t parts = 0;
  // The pass finishes its own split: its tiles' last blocks, one counter per tile (the family's
  // `ticket_columns` let: columns per counter), so no final kernel. 0: none (final_pass).
  std::uint64_t counters = 0;
  std::uint64_t final_grid = 0;  // a warp (split < 32: split lanes) per output; 0: none
  unsigned final_block_size = 0; // the finish kernel's block (0: none): axis_launch.cpp
  std::size_t accumulator_bytes = 0;
  bool batch_invariant = false; // the family's `batch_invariant` let for this point
  // The finish kernel is launched with programmatic stream serialization (Hopper's
  // programmatic dependent launch): it may start while the pass still runs and waits in
  // griddepcontrol.wait (axis_finish.cuh, wait_for_pass) until the pass has completed and its
  // partials are visible, so its launch and its blocks' start hide behind the pass's tail.
  // Decided once, by plan_axis, from the device the space was built for (its limits' arch,
  // >= 90: finish_programmatically); false where there is no finish kernel.
  bool programmatic_finish = false;
  std::string pass, final;      // name expressions ("" final when not launched)

  // Scratch for the partials: parts * outer * inner accumulators (0 when split == 1), then,
  // from counters_offset() (the next multiple of 16 bytes: axis_finish.cuh, tile_counters),
  // the counters as unsigned ints. The counters must be zero before the first launch on a
  // scratch (its owner zeroes them once, at allocation: zero_counters); every launch leaves
  // them zero.
  [[nodiscard]] std::uint64_t partials_bytes() const noexcept;
  [[nodiscard]] std::uint64_t counters_offset() const noexcept;
  [[nodiscard]] std::uint64_t counters_bytes() const noexcept;
  [[nodiscard]] bool finish_kernel() const noexcept { return split > 1 && counters == 0; }
  [[nodiscard]] unsigned launches() const noexcept { return finish_kernel() ? 2u : 1u; }
};

// Whether a device of compute capability `arch` (x 10) runs the finish kernel of a split with
// programmatic dependent launch: griddepcontrol exists from sm_90 on; below, the kernels
// compile without it (#if __CUDA_ARCH__ >= 900) and the attribute is never asked for.
[[nodiscard]] constexpr bool finish_programmatically(int arch) noexcept {
  return arch >= 90;
}

// Throws invalid_configuration when the point is invalid (with the space's reasons), its
// family does not declare the axis ABI, or the grid falls outside 1 .. 2^31 - 1.
[[nodiscard]] axis_plan plan_axis(const search_space &space, const point &p,
                                  const reduction_shape &shape);

// A plan's kernels looked up in the module that holds them. Looking one up is a map lookup by
// name and cuModuleGetFunction (under the driver's lock): a caller that launches a plan many
// times (the runtime per shape, the runner per sample) resolves it once.
struct axis_kernels {
  CUfunction pass = nullptr;
  CUfunction final = nullptr; // null when the plan does not split r
};

// Throws invalid_configuration when the module lacks one of the plan's kernels.
[[nodiscard]] axis_kernels resolve_axis(const loaded_module &module, const axis_plan &plan);

// The launch attributes of the plan's finish kernel (cuLaunchKernelEx): programmatic stream
// serialization where the plan says so, none otherwise. A value, so a launch allocates nothing.
struct launch_attributes {
  CUlaunchAttribute values[1]{};
  unsigned count = 0;
};
[[nodiscard]] launch_attributes finish_attributes(const axis_plan &plan) noexcept;

// Enqueues the plan's launches on `stream`: in holds outer * r * inner elements, out outer *
// inner, partials plan.partials_bytes() (may be null when that is 0). `kernels` must be
// resolve_axis of this plan (or of a plan of the same point: the names do not depend on the
// shape); no lookup, no allocation, nothing but the launches.
void launch_axis(const axis_kernels &kernels, const axis_plan &plan, const void *in, void *out,
                 void *partials, cudaStream_t stream);

// Zeroes the counters of a scratch of plan.partials_bytes() bytes at `scratch`
// (cuda/device_buffer.hpp zero_device_bytes: call it once, when the scratch is allocated);
// nothing where the plan has none.
void zero_counters(const axis_plan &plan, void *scratch);

// resolve_axis, then launch_axis: for a caller that launches a plan once.
void launch_axis(const loaded_module &module, const axis_plan &plan, const void *in, void *out,
                 void *partials, cudaStream_t stream);

} // namespace reducetune
