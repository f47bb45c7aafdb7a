#include "reducetune/space/reduction_plan.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/name_table.hpp"

#include <limits>
#include <string>

namespace reducetune {
namespace {

// Each multipass level writes one element per block; the level of one block writes out.
void plan_multipass(const grid_rule &grid_of, std::uint64_t n, reduction_plan &plan) {
  buffer_slot in = buffer_slot::input;
  for (buffer_slot next = buffer_slot::ping;;
       next = next == buffer_slot::ping ? buffer_slot::pong : buffer_slot::ping) {
    const unsigned g = checked_grid(grid_of(n), n);
    if (n > 1 && g >= n)
      throw invalid_configuration("multipass grid does not shrink: " + std::to_string(g) +
                                  " blocks for n = " + std::to_string(n));
    const buffer_slot out = g == 1 ? buffer_slot::out : next;
    plan.steps.push_back({kernel_role::pass, g, false, in, out, buffer_slot::partials, n});
    if (g == 1) return;
    in = out;
    n = g;
  }
}

void plan_steps(protocol proto, const grid_rule &grid_of, std::uint64_t n, reduction_plan &plan) {
  const std::uint64_t grid = plan.first_grid;
  const planned_step pass{kernel_role::pass,     grid, false, buffer_slot::input, buffer_slot::out,
                          buffer_slot::partials, n};
  switch (proto) {
  case protocol::multipass:
    plan_multipass(grid_of, n, plan);
    return;
  case protocol::two_pass:
    if (grid == 1) { // the one block's partial is the result: let it land in out
      plan.steps.push_back(
          {kernel_role::pass, 1, false, buffer_slot::input, buffer_slot::out, buffer_slot::out, n});
      return;
    }
    plan.steps.push_back(pass);
    plan.steps.push_back({kernel_role::final, 1, false, buffer_slot::partials, buffer_slot::out,
                          buffer_slot::partials, grid});
    return;
  case protocol::atomic:
    plan.steps.push_back({kernel_role::init, 1, true, buffer_slot::input, buffer_slot::out,
                          buffer_slot::partials, n});
    plan.steps.push_back(pass);
    return;
  case protocol::ticket:
  case protocol::host: // the pass writes partials[blockIdx.x]; the host finish follows
    plan.steps.push_back(pass);
    return;
  }
  throw invalid_configuration("unknown protocol");
}

} // namespace

const char *to_string(kernel_role r) noexcept {
  constexpr name_table<kernel_role, 3> names = {
      {{kernel_role::init, "init"}, {kernel_role::pass, "pass"}, {kernel_role::final, "final"}}};
  return name_of(names, r);
}

unsigned checked_grid(std::uint64_t blocks, std::uint64_t n) {
  if (blocks == 0 || blocks > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw invalid_configuration("grid of " + std::to_string(blocks) + " blocks for n = " +
                                std::to_string(n) + " is outside 1 .. 2^31 - 1");
  return static_cast<unsigned>(blocks);
}

reduction_plan plan_reduction_steps(protocol proto, const grid_rule &grid_of, std::uint64_t n,
                                    std::size_t element_bytes, bool in_place) {
  if (n == 0) throw invalid_configuration("a reduction needs n >= 1 elements");
  if (!grid_of) throw invalid_configuration("the launch plan has no grid expression");
  reduction_plan plan;
  plan.first_grid = checked_grid(grid_of(n), n);
  plan_steps(proto, grid_of, n, plan);
  // Every buffer is sized by the first pass: later multipass levels have fewer blocks.
  reduction_scratch &s = plan.scratch;
  // Partials are accumulators (float32 for 2-byte half types); out holds 4 bytes too, so that
  // a half type's result may be asked in float32. Multipass levels write elements (only the
  // seeds use it, and they refuse the half types).
  const std::size_t acc_bytes = accumulator_bytes(element_bytes);
  s.out = acc_bytes;
  s.partials = plan.first_grid * acc_bytes;
  if (proto == protocol::multipass) s.ping = s.pong = plan.first_grid * element_bytes;
  if (in_place) s.input_copy = n * element_bytes;
  s.ticket = sizeof(unsigned);
  return plan;
}

} // namespace reducetune
