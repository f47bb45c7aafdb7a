#include "reducetune/runtime/application_ranking.hpp"

#include "reducetune/db/catalog.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/sqlite.hpp"

#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace reducetune {
namespace {

struct candidate {
  dispatch_rule rule;
  double median_s = 0.0;
};

// (UUID of the model's first device, n) -> the fastest selected points there, fastest first.
std::map<std::pair<std::string, std::uint64_t>, std::vector<candidate>>
candidates(const db::database &db, dtype type, reduce_op op, const point_selection &s) {
  // Keyed by the UUID of the model's first device, as the Catalog keys its entries; ordered
  // as the Catalog orders a size's points.
  auto q = db.prepare(
      std::string("SELECT (SELECT d2.uuid FROM rt_devices d2 WHERE ") + db::same_model_sql +
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
    auto &list = out[{q.column_text(0), static_cast<std::uint64_t>(q.column_int(1))}];
    if (list.size() >= application_candidates)
      continue;
    dispatch_rule r{static_cast<std::uint64_t>(q.column_int(1)), q.column_text(2), q.column_text(3),
                    q.column_text(4), q.column_text(6), q.column_text(7) != "[]"};
    list.push_back({std::move(r), q.column_double(5)});
  }
  return out;
}

// The launch rules of the candidates on one device, each point's computed once (a point is
// a candidate at many sizes; its rule does not depend on n).
class rules_of {
public:
  rules_of(const template_library &lib, const db::device_record &d, dtype type, reduce_op op)
      : m_lib(lib), m_device(d), m_type(type), m_op(op) {}

  // nullptr when the point has no launch rule on this device.
  const db::launch_rule *find(const dispatch_rule &r) {
    const auto key = std::make_tuple(r.family, r.variant, r.launch);
    auto it = m_rules.find(key);
    if (it == m_rules.end()) {
      db::catalog_entry e;
      e.variant.family = r.family;
      e.variant.dtype = to_string(m_type);
      e.variant.op = to_string(m_op);
      e.variant.label = r.variant;
      e.launch_label = r.launch;
      auto rule = db::launch_rule_of(m_lib, m_device, e);
      std::optional<db::launch_rule> value;
      if (auto *l = std::get_if<db::launch_rule>(&rule))
        value = std::move(*l);
      it = m_rules.emplace(key, std::move(value)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

private:
  const template_library &m_lib;
  const db::device_record &m_device;
  dtype m_type;
  reduce_op m_op;
  std::map<std::tuple<std::string, std::string, std::string>, std::optional<db::launch_rule>>
      m_rules;
};

// median + (launches − 1) × extra; infinity when the point has no launch rule here.
double cost(rules_of &rules, const candidate &c, double extra_launch_s) {
  const db::launch_rule *r = rules.find(c.rule);
  if (r == nullptr)
    return std::numeric_limits<double>::infinity();
  return c.median_s + (db::launches_at(*r, c.rule.bucket_n) - 1.0) * extra_launch_s;
}

} // namespace

void rank_for_applications(std::vector<dispatch_device> &devices, const db::catalog &c,
                           const db::database &db, dtype type, reduce_op op,
                           const point_selection &selection, const template_library &lib,
                           double extra_launch_s) {
  const auto all = candidates(db, type, op, selection);
  for (auto &dev : devices) {
    const db::catalog_device *record = c.device_of(dev.uuid);
    if (record == nullptr)
      continue;
    rules_of rules(lib, record->device, type, op);
    for (auto &rule : dev.rules) {
      const auto it = all.find({dev.uuid, rule.bucket_n});
      if (it == all.end())
        continue;
      double best = std::numeric_limits<double>::infinity();
      for (const auto &cand : it->second)
        if (const double x = cost(rules, cand, extra_launch_s); x < best) {
          best = x;
          rule = cand.rule;
        }
    }
  }
}

} // namespace reducetune
