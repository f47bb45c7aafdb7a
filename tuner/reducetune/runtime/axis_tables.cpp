#include "reducetune/runtime/axis_tables.hpp"

#include "reducetune/db/axis_picks.hpp"
#include "reducetune/errors.hpp"

#include <nlohmann/json.hpp>

namespace reducetune {
namespace {

using nlohmann::json;

// An export's axis rule (export_json.cpp) as the entry of `level`: the rule's own point under
// run_to_run, its "batch_invariant_pick" under batch_invariant; false when it has none or the
// selection refuses the point.
bool entry_of(const json &r, const point_selection &selection, axis_determinism level,
              axis_entry &out) {
  const json &p = level == axis_determinism::batch_invariant ? r.at("batch_invariant_pick") : r;
  if (p.is_null())
    return false;
  const bool flagged = p.contains("flags") && p["flags"].is_array() && !p["flags"].empty();
  if ((flagged && !selection.allow_flagged) ||
      (selection.deterministic_only && p.value("determinism", "unknown") != "run_to_run"))
    return false;
  out = {{r.at("outer").get<std::uint64_t>(), r.at("r").get<std::uint64_t>(),
          r.at("inner").get<std::uint64_t>()},
         p.at("variant").get<std::string>(),
         p.at("launch").get<std::string>()};
  return true;
}

axis_device_table table_of(const json &d, const std::string &type, const std::string &op,
                           const point_selection &selection, axis_determinism level) {
  axis_device_table out{d.at("name").get<std::string>(), {}, d.at("compute_capability").get<int>(),
                        {}};
  if (const auto uuid = d.value("uuid", std::string{}); !uuid.empty())
    out.uuids.push_back(uuid);
  for (const auto &t : d.value("axis_tables", json::array())) {
    if (t.at("dtype") != type || t.at("op") != op)
      continue;
    for (const auto &r : t.at("rules"))
      if (axis_entry e; entry_of(r, selection, level, e))
        out.entries.push_back(std::move(e));
  }
  return out;
}

} // namespace

std::vector<axis_device_table> axis_tables_from_catalog(const db::catalog &c,
                                                        const template_library &lib, dtype type,
                                                        reduce_op op, axis_determinism level) {
  std::vector<axis_device_table> out;
  for (const auto &d : c.devices())
    for (const auto &t : d.axis_tables) {
      if (t.dtype != to_string(type) || t.op != to_string(op))
        continue;
      axis_device_table table{d.device.name, d.uuids, d.device.compute_capability(), {}};
      if (level == axis_determinism::run_to_run) // no point need be asked
        for (std::size_t i = 0; i < t.shapes.size(); ++i) {
          const db::catalog_entry &e = db::run_to_run_pick(t.ranked[i]);
          table.entries.push_back({t.shapes[i], e.variant.label, e.launch_label});
        }
      else
        for (const auto &pick : db::axis_picks(t, d.device, lib))
          if (pick.invariant != nullptr)
            table.entries.push_back(
                {pick.shape, pick.invariant->variant.label, pick.invariant->launch_label});
      if (!table.entries.empty())
        out.push_back(std::move(table));
    }
  return out;
}

std::vector<axis_device_table> axis_tables_from_json(const json &doc, dtype type, reduce_op op,
                                                     const point_selection &selection,
                                                     axis_determinism level) {
  if (!doc.is_object() || doc.value("format", std::string{}) != "reducetune-dispatch")
    throw invalid_configuration("not a reducetune dispatch table (expected \"format\": "
                                "\"reducetune-dispatch\", as `reducetune export json` writes)");
  std::vector<axis_device_table> out;
  try {
    for (const auto &d : doc.at("devices"))
      if (auto t = table_of(d, to_string(type), to_string(op), selection, level);
          !t.entries.empty())
        out.push_back(std::move(t));
  } catch (const json::exception &e) {
    throw invalid_configuration(std::string{"malformed dispatch table's axis rules: "} + e.what());
  }
  return out;
}

const axis_device_table *axis_table_for(const std::vector<axis_device_table> &tables,
                                        const db::device_query &q) noexcept {
  for (const db::device_key k : db::device_match_order)
    for (const auto &t : tables)
      if (db::device_matches(k, t.name, t.uuids, t.compute_capability, q))
        return &t;
  return nullptr;
}

} // namespace reducetune
