// The launches of one reduction under its protocol (docs/architecture.md, "Launch
// protocols") bound to kernels and device buffers, for the runner (measure/launch_sequence)
// and the runtime (runtime/reducer_launch). Which steps there are, on which grids, and the
// scratch they need is decided by the space's planner (space/reduction_plan.hpp) alone; this
// file only maps each step's role and buffer slots to handles. Launching them is
// kernel_launch.hpp's.
#pragma once

#include "reducetune/space/reduction_plan.hpp"

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace reducetune {

struct reduction_kernels {
  CUfunction pass = nullptr, final = nullptr, init = nullptr;
};

// Device memory the steps write: `out` (one element) receives the result of every protocol
// but host; `partials` holds one element per block of the first pass; multipass alternates
// between `ping` and `pong` (each one element per block of the first pass).
struct reduction_buffers {
  void *out = nullptr, *partials = nullptr, *ping = nullptr, *pong = nullptr;
};

struct reduction_step {
  CUfunction kernel;
  unsigned grid, block, shared;
  const void *in;
  void *out;
  std::uint64_t n;
  void *partials;
};

// The planner's steps bound: each role to its kernel, each buffer slot to `in` or `buffers`;
// `block` threads and `shared` dynamic bytes for every step but the one-thread init. The
// result is in buffers.out afterwards, except for the host protocol, whose step is the pass
// alone (its partials then go to the host: measure/host_finish.hpp). Throws
// invalid_configuration for a kernel a step needs and `kernels` lacks.
[[nodiscard]] std::vector<reduction_step> bind_reduction(const reduction_plan &plan,
                                                         const reduction_kernels &kernels,
                                                         unsigned block, unsigned shared,
                                                         const void *in,
                                                         const reduction_buffers &buffers);

// plan_reduction_steps (space/reduction_plan.hpp) then bind_reduction; the planner's refusals
// (a grid outside 1 .. 2^31 - 1, a multipass grid that does not shrink) pass through.
[[nodiscard]] std::vector<reduction_step>
plan_reduction(protocol proto, const reduction_kernels &kernels, const grid_rule &grid_of,
               unsigned block, unsigned shared, const void *in, std::uint64_t n,
               const reduction_buffers &buffers);

} // namespace reducetune
