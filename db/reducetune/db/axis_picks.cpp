#include "reducetune/db/axis_picks.hpp"

#include "reducetune/db/application_ranking.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/db/shape_rule.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <map>
#include <optional>

namespace reducetune::db {
namespace {

// A let of the point's scope, or `fallback` where the family binds none (the axis launcher's
// reading, measure/axis_launch.cpp, so that the export states what the launch will do).
std::int64_t let_or(const scope &s, const std::string &name, std::int64_t fallback) {
  return s.contains(name) ? expression::parse(name).eval_int(s) : fallback;
}

axis_launch_rule rule_of(const search_space &s, const point &p, const reduction_shape &shape,
                         const std::map<std::string, std::string> &lowered) {
  const launch_plan plan = s.plan_launch(p.compile, p.launch);
  if (plan.whole_array_abi)
    throw invalid_configuration("its kernels take the whole-array ABI, not the axis ABI");
  scope sc = s.scope_for(p.compile, p.launch);
  sc.set("outer", static_cast<std::int64_t>(shape.outer));
  sc.set("r", static_cast<std::int64_t>(shape.r));
  sc.set("inner", static_cast<std::int64_t>(shape.inner));
  sc.set("n", static_cast<std::int64_t>(shape.outer * shape.r * shape.inner));
  axis_launch_rule r;
  r.block_size = plan.block_size;
  r.grid_expression = s.decl().grid.text();
  r.grid = static_cast<std::uint64_t>(s.decl().grid.eval_int(sc));
  r.split = static_cast<std::uint64_t>(let_or(sc, "split", 1));
  r.batch_invariant = let_or(sc, "batch_invariant", 0) != 0;
  r.kernels = detail::kernels_of(plan, lowered);
  if (const std::int64_t columns = let_or(sc, "ticket_columns", 0); columns > 0 && r.split > 1) {
    r.ticket_columns = static_cast<std::uint64_t>(columns);
    std::erase_if(r.kernels, [](const kernel_ref &k) { return k.role == "final"; });
  }
  return r;
}

// The space of an entry's family, type and operator on device d.
search_space space_of(const template_library &lib, const device_record &d,
                      const catalog_entry &e) {
  device_limits limits = device_limits::for_arch(std::to_string(d.compute_capability()));
  if (d.sm_count > 0)
    limits.sm_count = d.sm_count;
  return {family::load(lib, e.variant.family), dtype_from_string(e.variant.dtype),
          op_from_string(e.variant.op), limits};
}

// Whether the entry is batch_invariant at its shape; false for one without an axis rule.
bool invariant(const search_space &s, const catalog_entry &e, const reduction_shape &shape) {
  try {
    return rule_of(s, stored_point(s, e.variant.label, e.launch_label), shape, {})
        .batch_invariant;
  } catch (const error &) {
    return false;
  }
}

// The pick among a level's points, fastest replayed median first (axis_pick); nullptr for none.
const catalog_entry *level_pick(const std::vector<const catalog_entry *> &level) {
  if (level.empty())
    return nullptr;
  std::vector<call_cost> costs;
  for (const catalog_entry *e : level)
    costs.push_back({e->application_s.value_or(0.0), e->median_s});
  return level[measured_pick(costs).value_or(0)];
}

} // namespace

const catalog_entry &run_to_run_pick(const std::vector<catalog_entry> &ranked) {
  std::vector<const catalog_entry *> level;
  for (const auto &e : ranked)
    level.push_back(&e);
  return *level_pick(level);
}

std::optional<axis_answer> axis_best(const catalog_axis_table &t, const reduction_shape &wanted) {
  const auto i = nearest_shape_index(t.shapes, wanted);
  if (!i)
    return std::nullopt;
  const reduction_shape &at = t.shapes[*i];
  const catalog_entry &e = run_to_run_pick(t.ranked[*i]);
  best_choice b{e.measurement_id,         wanted.r,   at.r,   e.variant,    e.launch_label,
                e.launch_parameters_json, e.median_s, e.gbps, e.pct_of_peak};
  b.bucket_outer = at.outer;
  b.bucket_inner = at.inner;
  return axis_answer{std::move(b), e.application_s};
}

std::variant<axis_launch_rule, std::string>
axis_launch_rule_of(const template_library &lib, const device_record &d, const catalog_entry &e,
                    const reduction_shape &shape, const lowered_names_fn &lowered) {
  try {
    const search_space s = space_of(lib, d, e);
    const point p = stored_point(s, e.variant.label, e.launch_label); // the store reads it once
    auto names = detail::stored_names(e.lowered_json);
    if (names.empty() && lowered)
      names = lowered(s, p, d.compute_capability());
    return rule_of(s, p, shape, names);
  } catch (const error &x) {
    return std::string(x.what());
  }
}

std::vector<axis_pick> axis_picks(const catalog_axis_table &t, const device_record &d,
                                  const template_library &lib) {
  std::vector<axis_pick> out;
  std::map<std::string, std::optional<search_space>> spaces; // by family, built once
  for (std::size_t i = 0; i < t.shapes.size(); ++i) {
    // the first batch_invariant point, then the timed ones only: no other can be picked
    std::vector<const catalog_entry *> level;
    for (const auto &e : t.ranked[i]) {
      if (!level.empty() && !e.application_s)
        continue;
      auto [it, fresh] = spaces.try_emplace(e.variant.family);
      if (fresh)
        try {
          it->second.emplace(space_of(lib, d, e));
        } catch (const error &) { // a family lib lacks: none of its points is launchable
        }
      if (it->second && invariant(*it->second, e, t.shapes[i]))
        level.push_back(&e);
    }
    out.push_back({t.shapes[i], &run_to_run_pick(t.ranked[i]), level_pick(level)});
  }
  return out;
}

} // namespace reducetune::db
