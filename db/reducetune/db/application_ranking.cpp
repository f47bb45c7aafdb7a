#include "reducetune/db/application_ranking.hpp"

#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/records.hpp"
#include "reducetune/db/sqlite.hpp"

#include <limits>
#include <optional>
#include <map>
#include <tuple>
#include <vector>

namespace reducetune::db {
namespace {

struct candidate {
  application_pick pick;
  std::uint64_t bucket_n = 0;
};

// (UUID of the model's first device, n) -> the fastest selected points there, fastest first,
// ordered as the Catalog orders a size's points.
std::map<std::pair<std::string, std::uint64_t>, std::vector<candidate>>
candidates(const database &db, dtype type, reduce_op op, const point_selection &s) {
  auto q = db.prepare(
      std::string("SELECT (SELECT d2.uuid FROM rt_devices d2 WHERE ") + same_model_sql +
      " ORDER BY d2.id LIMIT 1) AS model, w.n, v.family, v.label, m.launch_label, m.median_s,"
      " v.determinism, v.flags FROM rt_measurements m JOIN rt_workloads w ON w.id ="
      " m.workload_id JOIN rt_variants v ON v.id = m.variant_id JOIN rt_devices d1"
      " ON d1.id = m.device_id"
      " WHERE m.status = 'ok' AND m.median_s IS NOT NULL AND w.dtype = ?3 AND w.op = ?4"
      " AND (?1 OR v.flags = '[]') AND (NOT ?2 OR v.determinism = 'run_to_run')"
      " ORDER BY model, w.n, m.median_s, v.label, m.launch_label, m.id");
  q.bind(1, s.allow_flagged ? 1 : 0).bind(2, s.deterministic_only ? 1 : 0);
  q.bind(3, std::string{to_string(type)}).bind(4, std::string{to_string(op)});
  std::map<std::pair<std::string, std::uint64_t>, std::vector<candidate>> out;
  while (q.step()) {
    const auto n = static_cast<std::uint64_t>(q.column_int(1));
    auto &list = out[{q.column_text(0), n}];
    if (list.size() >= application_candidates)
      continue;
    application_pick p{q.column_text(2), q.column_text(3), q.column_text(4), q.column_text(6),
                       q.column_text(7) != "[]", q.column_double(5), 0};
    list.push_back({std::move(p), n});
  }
  return out;
}

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

} // namespace

application_picks rank_for_applications(const catalog &c, const database &db, dtype type,
                                        reduce_op op, const point_selection &selection,
                                        const template_library &lib, double extra_launch_s) {
  application_picks picks;
  std::map<std::string, rules_of> by_model; // a point's rule is computed once per model
  for (auto &[key, list] : candidates(db, type, op, selection)) {
    const catalog_device *record = c.device_of(key.first);
    if (record == nullptr)
      continue;
    rules_of &rules =
        by_model.try_emplace(key.first, lib, record->device, type, op).first->second;
    double best = std::numeric_limits<double>::infinity();
    for (auto &cand : list) {
      const launch_rule *r = rules.find(cand.pick);
      if (r == nullptr)
        continue;
      const unsigned launches = launches_at(*r, cand.bucket_n);
      if (const double cost = cand.pick.median_s + (launches - 1.0) * extra_launch_s;
          cost < best) {
        best = cost;
        cand.pick.launches = launches;
        picks[key] = cand.pick;
      }
    }
  }
  return picks;
}

} // namespace reducetune::db
