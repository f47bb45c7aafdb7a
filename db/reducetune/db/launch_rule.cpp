#include "reducetune/db/launch_rule.hpp"

#include <array>

#include <nlohmann/json.hpp>

#include "reducetune/db/point_records.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/templates/template_library.hpp"
#include "reducetune/space/reduction_plan.hpp"
#include "reducetune/space/space.hpp"

namespace reducetune::db {
namespace {

using grid_fn = std::function<std::uint64_t(std::uint64_t)>;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// grid(n), or "more than a grid can hold" where the space refuses the size.
std::uint64_t blocks(const grid_fn &grid, std::uint64_t n) {
  try {
    return grid(n);
  } catch (const invalid_configuration &) {
    return ~std::uint64_t{0};
  }
}

// items_per_block: the largest n that one block covers (grid(n) == 1), found by bisection.
std::uint64_t items_per_block(const grid_fn &grid) {
  if (blocks(grid, 1) != 1)
    throw invalid_configuration("the grid of n = 1 is not one block");
  std::uint64_t lo = 1, hi = std::uint64_t{1} << 40;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (blocks(grid, mid) == 1)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Fits grid(n) = min(ceil_div(n, ipb), cap) and checks the fit on sizes around every edge.
void fit_grid(const grid_fn &grid, launch_rule &r) {
  r.items_per_block = items_per_block(grid);
  const std::uint64_t probe_blocks = std::uint64_t{1} << 20;
  const std::uint64_t at_probe = blocks(grid, r.items_per_block * probe_blocks);
  r.max_blocks = at_probe < probe_blocks ? at_probe : 0;
  const std::uint64_t ipb = r.items_per_block;
  const std::array<std::uint64_t, 9> sizes = {
      1, 2, ipb, ipb + 1, 3 * ipb + 7, 1000 * ipb + 1, (1ull << 20) + 3, 1ull << 28, 1ull << 30};
  for (const auto n : sizes) {
    std::uint64_t expect = ceil_div(n, ipb);
    if (r.max_blocks != 0 && expect > r.max_blocks)
      expect = r.max_blocks;
    if (expect <= 2147483647ull && blocks(grid, n) != expect)
      throw invalid_configuration("grid '" + r.grid_expression +
                                  "' is not min(ceil_div(n, k), cap) at n = " + std::to_string(n));
  }
}

} // namespace

namespace detail {

std::map<std::string, std::string> stored_names(const std::string &lowered_json) {
  std::map<std::string, std::string> out;
  const auto j = nlohmann::json::parse(lowered_json, nullptr, false);
  if (j.is_object())
    for (const auto &[expr, name] : j.items())
      if (name.is_string())
        out[expr] = name.get<std::string>();
  return out;
}

std::vector<kernel_ref> kernels_of(const launch_plan &plan,
                                   const std::map<std::string, std::string> &lowered) {
  std::vector<kernel_ref> out;
  for (const char *role : {"init", "pass", "final"}) {
    const auto it = plan.kernels.find(role);
    if (it == plan.kernels.end())
      continue;
    const auto name = lowered.find(it->second);
    out.push_back({role, it->second, name == lowered.end() ? "" : name->second});
  }
  return out;
}

} // namespace detail

namespace {

using detail::kernels_of;
using detail::stored_names;
using names_fn = std::function<std::map<std::string, std::string>()>;

// The rule of a typed point; its kernels' lowered names are asked for last, once the point is
// known to have a rule (they may cost a compile).
launch_rule rule_of(const search_space &s, const point &p, const names_fn &names) {
  const launch_plan plan = s.plan_launch(p.compile, p.launch);
  if (!plan.whole_array_abi)
    throw invalid_configuration("its kernels take the axis ABI (a reduction along an axis), "
                                "not the whole array's (in, out, n, partials, ticket)");
  if (plan.proto == protocol::host)
    throw invalid_configuration(
        "its protocol 'host' combines the partials on the CPU (a research point of `experiment "
        "cascading`): no launch rule can write the result to an application's device pointer");
  launch_rule r;
  r.protocol = to_string(plan.proto);
  r.block_size = plan.block_size;
  r.dynamic_shared_bytes = plan.dynamic_shared_bytes;
  r.in_place = plan.in_place;
  r.device_launches = plan.device_launches;
  r.grid_expression = s.decl().grid.text();
  fit_grid(plan.grid_for, r);
  r.kernels = kernels_of(plan, names());
  return r;
}

} // namespace

std::variant<launch_rule, std::string>
launch_rule_of(const search_space &s, const point &p,
               const std::map<std::string, std::string> &lowered) {
  try {
    return rule_of(s, p, [&] { return lowered; });
  } catch (const error &x) {
    return std::string(x.what());
  }
}

std::variant<launch_rule, std::string>
launch_rule_of(const template_library &lib, const device_record &d, const catalog_entry &e,
               const lowered_names_fn &lowered) {
  try {
    device_limits limits = device_limits::for_arch(std::to_string(d.compute_capability()));
    if (d.sm_count > 0)
      limits.sm_count = d.sm_count;
    const search_space s(family::load(lib, e.variant.family), dtype_from_string(e.variant.dtype),
                         op_from_string(e.variant.op), limits);
    const point p = stored_point(s, e.variant.label, e.launch_label); // the store reads it once
    return rule_of(s, p, [&] {
      auto names = stored_names(e.lowered_json);
      if (names.empty() && lowered)
        names = lowered(s, p, d.compute_capability());
      return names;
    });
  } catch (const error &x) {
    return std::string(x.what());
  }
}

std::uint64_t grid_at(const launch_rule &r, std::uint64_t n) noexcept {
  const std::uint64_t g = ceil_div(n, r.items_per_block == 0 ? 1 : r.items_per_block);
  return r.max_blocks != 0 && g > r.max_blocks ? r.max_blocks : g;
}

unsigned launches_at(const launch_rule &r, std::uint64_t n) {
  // The planner's count (space/reduction_plan.hpp), as the runner and the runtime launch.
  const auto grid = [&r](std::uint64_t m) { return grid_at(r, m); };
  return plan_reduction_steps(protocol_from_string(r.protocol), grid, n, 0).launches();
}

} // namespace reducetune::db
