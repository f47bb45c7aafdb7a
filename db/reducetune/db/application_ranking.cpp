#include "reducetune/db/application_ranking.hpp"

#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/records.hpp"
#include "reducetune/db/rows.hpp"
#include "reducetune/db/sqlite.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace reducetune::db {
namespace {

using detail::model_of_d1; // the model key every query here files sizes under

// (model, n) -> the fastest `application_scan` selected points there, fastest first, launches
// not yet known.
candidate_lists scanned(const database &db, dtype type, reduce_op op, const point_selection &s) {
  auto q = db.prepare(
      "SELECT " + model_of_d1 + " AS model, w.n, v.family, v.label, m.launch_label, m.median_s,"
      " v.determinism, v.flags, m.id, a.median_s FROM rt_measurements m JOIN rt_workloads w"
      " ON w.id = m.workload_id JOIN rt_variants v ON v.id = m.variant_id JOIN rt_devices d1"
      " ON d1.id = m.device_id LEFT JOIN rt_application_times a ON a.measurement_id = m.id"
      " WHERE m.status = 'ok' AND m.median_s IS NOT NULL AND w.dtype = ?3 AND w.op = ?4"
      " AND w.outer = 1 AND w.inner = 1" // the whole array (1, n, 1), as the Catalog's tables
      " AND (?1 OR v.flags = '[]') AND (NOT ?2 OR v.determinism = 'run_to_run')"
      " ORDER BY model, w.n, m.median_s, v.label, m.launch_label, m.id");
  q.bind(1, s.allow_flagged ? 1 : 0).bind(2, s.deterministic_only ? 1 : 0);
  q.bind(3, std::string{to_string(type)}).bind(4, std::string{to_string(op)});
  candidate_lists out;
  while (q.step()) {
    const auto n = static_cast<std::uint64_t>(q.column_int(1));
    auto &list = out[{q.column_text(0), n}];
    if (list.size() >= application_scan)
      continue;
    application_pick p{q.column_text(2), q.column_text(3), q.column_text(4), q.column_text(6),
                       q.column_text(7) != "[]", q.column_double(5), 0,
                       q.column_optional_double(9).value_or(0.0)};
    list.push_back({q.column_int(8), std::move(p)});
  }
  return out;
}

} // namespace

std::optional<std::size_t> measured_pick(std::span<const call_cost> costs) {
  double fastest_call = std::numeric_limits<double>::infinity();
  for (const auto &c : costs)
    if (c.application_s > 0)
      fastest_call = std::min(fastest_call, c.application_s);
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const call_cost &c = costs[i];
    const bool tied =
        c.application_s > 0 && c.application_s <= fastest_call * (1 + application_tie);
    if (tied && (!best || c.median_s < costs[*best].median_s))
      best = i;
  }
  return best;
}

std::optional<std::string> model_key_of(const database &db, const std::string &uuid) {
  auto q = db.prepare("SELECT " + model_of_d1 + " FROM rt_devices d1 WHERE d1.uuid = ?1");
  q.bind(1, uuid);
  if (!q.step())
    return std::nullopt;
  return q.column_text(0);
}

namespace {

// The launch rules of the candidates on one device, each point's computed once (a point is
// a candidate at many sizes; its rule does not depend on n).
class rules_of {
public:
  rules_of(const template_library &lib, const device_record &d, dtype type, reduce_op op)
      : m_lib(lib), m_device(d), m_type(type), m_op(op) {}

  // nullptr when the point has no launch rule on this device.
  const launch_rule *find(const application_pick &p) {
    const auto key = std::make_tuple(p.family, p.variant, p.launch);
    auto it = m_rules.find(key);
    if (it == m_rules.end()) {
      catalog_entry e;
      e.variant.family = p.family;
      e.variant.dtype = to_string(m_type);
      e.variant.op = to_string(m_op);
      e.variant.label = p.variant;
      e.launch_label = p.launch;
      auto rule = launch_rule_of(m_lib, m_device, e);
      std::optional<launch_rule> value;
      if (auto *l = std::get_if<launch_rule>(&rule))
        value = std::move(*l);
      it = m_rules.emplace(key, std::move(value)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

private:
  const template_library &m_lib;
  const device_record &m_device;
  dtype m_type;
  reduce_op m_op;
  std::map<std::tuple<std::string, std::string, std::string>, std::optional<launch_rule>>
      m_rules;
};

// The first `application_candidates` of a size's scanned points that have a launch rule on the
// model, then the fastest of each launch count they lack (the protocol cannot see what a
// launch costs a lone call, so the fastest one-launch point is weighed even when sixteen
// two-launch points replayed faster: float32 max at 2^24 on an H200, 2026-11-24).
std::vector<application_candidate> weighed(std::vector<application_candidate> &scan,
                                          std::uint64_t n, rules_of &rules) {
  std::vector<application_candidate> out;
  std::set<unsigned> counts;
  for (auto &cand : scan) {
    const launch_rule *r = rules.find(cand.pick);
    if (r == nullptr)
      continue;
    cand.pick.launches = launches_at(*r, n);
    if (out.size() < application_candidates || !counts.contains(cand.pick.launches)) {
      counts.insert(cand.pick.launches);
      out.push_back(cand);
    }
  }
  return out;
}

// A size's pick: by measured application time where any candidate has one (calibrated
// sizes: measured_pick), else by the estimate.
std::optional<application_pick> pick_of(const std::vector<application_candidate> &list,
                                        double extra_launch_s) {
  std::vector<call_cost> costs;
  for (const auto &cand : list)
    costs.push_back({cand.pick.application_s, cand.pick.median_s});
  if (const auto i = measured_pick(costs))
    return list[*i].pick;
  std::optional<application_pick> best;
  double least = std::numeric_limits<double>::infinity();
  for (const auto &cand : list) {
    const auto &p = cand.pick;
    const double cost = p.median_s + (p.launches - 1.0) * extra_launch_s;
    if (cost < least) {
      least = cost;
      best = p;
    }
  }
  return best;
}

} // namespace

candidate_lists application_candidates_of(const catalog &c, const database &db, dtype type,
                                          reduce_op op, const point_selection &selection,
                                          const template_library &lib) {
  candidate_lists out;
  std::map<std::string, rules_of> by_model; // a point's rule is computed once per model
  for (auto &[key, scan] : scanned(db, type, op, selection)) {
    const catalog_device *record = c.device_of(key.first);
    if (record == nullptr)
      continue;
    rules_of &rules =
        by_model.try_emplace(key.first, lib, record->device, type, op).first->second;
    if (auto list = weighed(scan, key.second, rules); !list.empty())
      out[key] = std::move(list);
  }
  return out;
}

application_picks rank_for_applications(const catalog &c, const database &db, dtype type,
                                        reduce_op op, const point_selection &selection,
                                        const template_library &lib, double extra_launch_s) {
  application_picks picks;
  for (const auto &[key, list] : application_candidates_of(c, db, type, op, selection, lib))
    if (auto p = pick_of(list, extra_launch_s))
      picks[key] = std::move(*p);
  return picks;
}

} // namespace reducetune::db
