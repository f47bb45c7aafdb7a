// The launches of one reduction under its protocol (docs/architecture.md, "Launch
// protocols"), decided once for the runner (measure/launch_sequence) and the runtime
// (runtime/reducer_launch): which kernel runs on which grid, reading what and writing where,
// and where the result lands. Launching them is kernel_launch.hpp's.
#pragma once

#include "reducetune/space/launch_plan.hpp"

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

// The steps of one reduction of n elements at `in`. `grid_of(n)` is the point's grid rule.
// The result is in buffers.out afterwards, except for the host protocol, whose step is the
// pass alone (its partials then go to the host: measure/host_finish.hpp). Throws
// invalid_configuration for a grid outside 1 .. 2^31 - 1, a multipass grid that does not
// shrink, or a kernel the protocol needs and `kernels` lacks.
[[nodiscard]] std::vector<reduction_step>
plan_reduction(protocol proto, const reduction_kernels &kernels,
               const std::function<std::uint64_t(std::uint64_t)> &grid_of, unsigned block,
               unsigned shared, const void *in, std::uint64_t n, const reduction_buffers &buffers);

// A grid rule's answer at n as a launchable grid (1 .. 2^31 - 1), or invalid_configuration.
[[nodiscard]] unsigned checked_grid(std::uint64_t blocks, std::uint64_t n);

} // namespace reducetune
