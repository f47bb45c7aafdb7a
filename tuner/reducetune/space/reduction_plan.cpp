#include "reducetune/space/reduction_plan.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/name_table.hpp"
#include "reducetune/space/space.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace reducetune {
namespace {

// A point's integer identifier (a parameter or a let binding: block_size, in_place).
std::int64_t integer_named(const scope &s, const std::string &name) {
  return expression::parse(name).eval_int(s);
}

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
    plan.steps.push_back(pass);
    return;
  case protocol::host: // the pass writes partials[blockIdx.x]; the host finish reads them
    plan.steps.push_back(pass);
    // A grid of one block writes its result to out, not partials[0] (rt_grid.cuh's two-pass
    // finish, which the host protocol's pass compiles): point out at the partial the host
    // reads. The host families keep T partials (no half types), so out's type is the same.
    if (grid == 1) plan.steps.back().out = buffer_slot::partials;
    return;
  }
  throw invalid_configuration("unknown protocol");
}

} // namespace

std::vector<std::string> roles_launched(protocol p) {
  switch (p) {
  case protocol::two_pass:
    return {"pass", "final"};
  case protocol::atomic:
    return {"init", "pass"};
  default:
    return {"pass"};
  }
}

launch_plan search_space::plan_launch(const variant &v, const launch_config &c) const {
  if (const auto result = check(v, c); !result)
    throw invalid_configuration("cannot plan a launch of " + to_label(m_family, v) + " " +
                                to_label(m_family, c) + ": " + result.reasons());
  const scope s = scope_for(v, c);
  launch_plan plan;
  plan.proto = protocol_from_string(m_family.protocol.eval_string(s));
  plan.op = v.op;
  if (!s.contains("block_size"))
    throw invalid_configuration("family '" + m_family.name + "' has no block_size parameter");
  plan.block_size = static_cast<unsigned>(integer_named(s, "block_size"));
  if (m_family.dynamic_shared_bytes) {
    const std::int64_t bytes = m_family.dynamic_shared_bytes->eval_int(s);
    if (bytes < 0 || bytes > m_limits.max_shared_per_block)
      throw invalid_configuration("dynamic shared memory of " + std::to_string(bytes) +
                                  " bytes is outside [0, " +
                                  std::to_string(m_limits.max_shared_per_block) + "]");
    plan.dynamic_shared_bytes = static_cast<unsigned>(bytes);
  }
  plan.in_place = s.contains("in_place") && integer_named(s, "in_place") != 0;
  plan.device_launches = m_family.requires_rdc;
  plan.whole_array_abi = m_family.abi == "whole_array";
  plan.kernels = kernel_names(v);
  const auto roles = roles_launched(plan.proto); // only the kernels this protocol launches
  for (auto it = plan.kernels.begin(); it != plan.kernels.end();)
    it = std::find(roles.begin(), roles.end(), it->first) == roles.end() ? plan.kernels.erase(it)
                                                                         : std::next(it);
  plan.grid_for = [s, grid = m_family.grid](std::uint64_t n) {
    if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw invalid_configuration("input length " + std::to_string(n) + " is too large");
    scope with_n = s;
    with_n.set("n", static_cast<std::int64_t>(n));
    const std::int64_t blocks = grid.eval_int(with_n);
    // 2^31 - 1: the largest x-dimension of a grid on every architecture since 3.0.
    if (blocks < 1 || blocks > std::int64_t{2147483647})
      throw invalid_configuration("grid '" + grid.text() + "' gives " + std::to_string(blocks) +
                                  " blocks for n = " + std::to_string(n) +
                                  " (must be in [1, 2^31 - 1])");
    return static_cast<std::uint64_t>(blocks);
  };
  return plan;
}

launch_plan plan_launch(const family &f, const variant &v, const launch_config &c,
                        const device_limits &limits) {
  return search_space(f, v.type, v.op, limits).plan_launch(v, c);
}

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
