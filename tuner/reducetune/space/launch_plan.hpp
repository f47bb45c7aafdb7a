// What the runner needs to launch one variant under one launch config: the contract between
// the search space (which evaluates the family's declaration) and the runner (which launches).
#pragma once

#include "reducetune/space/element.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace reducetune {

// docs/architecture.md, "Launch protocols". `host` is the seeds' host finish: the pass writes one
// partial per block, the partials are copied to the host and combined there (research: the
// cascading experiment); no application can launch it on a device pointer.
enum class protocol { multipass, two_pass, atomic, ticket, host };

[[nodiscard]] const char *to_string(protocol p) noexcept;
// Throws invalid_configuration for an unknown name.
[[nodiscard]] protocol protocol_from_string(const std::string &name);

struct launch_plan {
  protocol proto = protocol::two_pass;
  // The point's operator: the host protocol combines the partials with it on the CPU.
  reduce_op op = reduce_op::sum;
  unsigned block_size = 0;
  unsigned dynamic_shared_bytes = 0;
  bool in_place = false; // the pass kernel overwrites its input: give it a scratch copy
  // The kernels launch kernels (dynamic parallelism): the runner raises the device runtime's
  // pending-launch limit so that one child launch per block of the first grid fits.
  bool device_launches = false;
  // The kernels take the whole-array ABI (in, out, n, partials, ticket). False for a family
  // whose points bind `abi` to another value (the axis family's 'axis': in, out, outer, r,
  // inner, partials): only that family's own launcher (measure/axis_launch.hpp) may run them;
  // the runner, the runtime and the exports refuse them rather than pass the wrong arguments.
  bool whole_array_abi = true;
  // Grid of a pass over n elements (the family's "grid" expression, bound to this point and
  // launch config). multipass calls it again for each pass over the partials.
  std::function<std::uint64_t(std::uint64_t n)> grid_for;
  // Name expression per role ("pass", "final", "init") as given to NVRTC; the compiled
  // program maps each to its lowered (mangled) name.
  std::map<std::string, std::string> kernels;
};

} // namespace reducetune
