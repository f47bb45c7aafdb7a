// The one planner of a reduction's launches (docs/architecture.md, "Launch protocols"), in two
// steps defined in reduction_plan.cpp: a point's launch plan (search_space::plan_launch,
// declared in space.hpp: block size, the grid rule with the point's values bound into it,
// protocol, the kernels the protocol launches), then, for that plan and a size n, the steps
// (which kernel role runs on which grid, over how many elements, reading and writing which
// buffer), hence the launch count, and the scratch the steps need. Pure: no GPU types, so that
// the runner (measure/evaluate, measure/launch_sequence), the runtime (runtime/reducer_launch)
// and the exports (db::launch_rule_of, db::launches_at) ask the same functions;
// cuda/reduction_steps binds kernels and device pointers to these steps.
#pragma once

#include "reducetune/space/launch_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace reducetune {

enum class kernel_role { init, pass, final };
[[nodiscard]] const char *to_string(kernel_role r) noexcept;

// The kernel roles ("init", "pass", "final") a protocol launches, as a family names them in
// "kernels": the steps below launch exactly these, and the space refuses a family that lacks
// one (search_space::check).
[[nodiscard]] std::vector<std::string> roles_launched(protocol p);

// Where a step reads or writes: the (possibly copied) input, the one-element result, one
// element per block of the first pass (`partials`), or the two multipass buffers.
enum class buffer_slot { input, out, partials, ping, pong };

struct planned_step {
  kernel_role role = kernel_role::pass;
  std::uint64_t grid = 1;
  bool single_thread = false; // the atomic identity init: one block of one thread, no shared
  buffer_slot in = buffer_slot::input, out = buffer_slot::out, partials = buffer_slot::partials;
  std::uint64_t n = 0; // elements the step reduces
};

// Bytes of device scratch a reduction of n elements needs, per buffer (0: not needed).
struct reduction_scratch {
  std::uint64_t out = 0;            // one element: the result (every protocol's step writes it)
  std::uint64_t partials = 0;       // one element per block of the first pass
  std::uint64_t ping = 0, pong = 0; // multipass: one element per block of the first pass each
  std::uint64_t input_copy = 0;     // in-place kernels reduce a copy of the n inputs
  std::uint64_t ticket = 0; // the ticket counter (an unsigned), allocated for every protocol
  [[nodiscard]] std::uint64_t total() const noexcept {
    return out + partials + ping + pong + input_copy + ticket;
  }
};

struct reduction_plan {
  std::vector<planned_step> steps; // in launch order
  std::uint64_t first_grid = 0;    // the first pass's grid (the host protocol's partials)
  reduction_scratch scratch;
  // Kernel launches the host enqueues (nested launches' children are the device's; the host
  // protocol's copy and CPU combine are no launches).
  [[nodiscard]] unsigned launches() const noexcept { return static_cast<unsigned>(steps.size()); }
};

using grid_rule = std::function<std::uint64_t(std::uint64_t n)>;

// The steps of one reduction of n elements under `proto`, `grid_of` being the point's grid rule
// (launch_plan::grid_for, or an export's db::grid_at). two_pass: the pass, then one block's
// final over the partials (the pass alone when one block covers n: its partial is the result);
// atomic: the identity init, then the pass; ticket and host: the pass alone; multipass: one
// pass per level, alternating ping and pong, until a pass of one block writes out. Throws
// invalid_configuration for n = 0, a grid outside 1 .. 2^31 - 1, or a multipass grid that does
// not shrink.
[[nodiscard]] reduction_plan plan_reduction_steps(protocol proto, const grid_rule &grid_of,
                                                  std::uint64_t n, std::size_t element_bytes,
                                                  bool in_place = false);

// A grid rule's answer at n as a launchable grid (1 .. 2^31 - 1), or invalid_configuration.
[[nodiscard]] unsigned checked_grid(std::uint64_t blocks, std::uint64_t n);

} // namespace reducetune
