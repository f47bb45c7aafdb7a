// export_json: the Catalog as JSON, the same rules as the header (export.hpp).
#include "reducetune/db/export.hpp"

#include <map>
#include <utility>
#include <variant>

#include "reducetune/db/export_axis.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/schema.hpp"

namespace reducetune::db {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json parsed(const std::string &json, ordered_json fallback) {
  return detail::parsed_json(json, std::move(fallback));
}

void put_launch(ordered_json &r, const std::variant<launch_rule, std::string> &rule) {
  const launch_rule *l = std::get_if<launch_rule>(&rule);
  r["launchable"] = l != nullptr;
  if (l == nullptr) {
    r["why"] = std::get<std::string>(rule);
    return;
  }
  r["protocol"] = l->protocol;
  r["block_size"] = l->block_size;
  r["dynamic_shared_bytes"] = l->dynamic_shared_bytes;
  r["in_place"] = l->in_place;
  r["device_launches"] = l->device_launches;
  r["grid"] = {{"items_per_block", l->items_per_block},
               {"max_blocks", l->max_blocks},
               {"expression", l->grid_expression}};
  r["kernels"] = detail::kernels_json(l->kernels);
}

} // namespace

nlohmann::ordered_json export_rule_json(const catalog_entry &e, const device_record &d,
                                        const template_library &lib,
                                        const lowered_names_fn &lowered) {
  ordered_json r;
  r["min_n"] = e.min_n;
  r["bucket_n"] = e.bucket_n;
  r["variant"] = e.variant.label;
  r["launch"] = e.launch_label;
  r["family"] = e.variant.family;
  r["compile_parameters"] = parsed(e.variant.parameters_json, ordered_json::object());
  r["launch_parameters"] = parsed(e.launch_parameters_json, ordered_json::object());
  r["flags"] = parsed(e.variant.flags_json, ordered_json::array());
  r["determinism"] = e.variant.determinism;
  put_launch(r, launch_rule_of(lib, d, e, lowered));
  r["median_s"] = e.median_s;
  r["gbps"] = e.gbps ? ordered_json(*e.gbps) : ordered_json();
  return r;
}

nlohmann::ordered_json application_pick_json(const application_pick &p) {
  return {{"family", p.family},           {"variant", p.variant},   {"launch", p.launch},
          {"determinism", p.determinism}, {"flagged", p.flagged},   {"median_s", p.median_s},
          {"launches", p.launches},
          // a lone call's measured median (reducetune calibrate), null where estimated
          {"application_s", p.application_s > 0 ? nlohmann::ordered_json(p.application_s)
                                                : nlohmann::ordered_json(nullptr)}};
}

namespace {

// The application picks of each (dtype, op) of the Catalog, computed once per pair.
class picks_by_workload {
public:
  picks_by_workload(const catalog &c, const template_library &lib, const application_source *s)
      : m_catalog(c), m_lib(lib), m_source(s) {}

  const application_pick *find(const std::string &dtype, const std::string &op,
                               const std::string &uuid, std::uint64_t n) {
    if (m_source == nullptr || m_source->db == nullptr)
      return nullptr;
    auto it = m_picks.find({dtype, op});
    if (it == m_picks.end())
      it = m_picks
               .emplace(std::make_pair(dtype, op),
                        rank_for_applications(m_catalog, *m_source->db, dtype_from_string(dtype),
                                              op_from_string(op), m_source->selection, m_lib,
                                              m_source->extra_launch_s))
               .first;
    const auto p = it->second.find({uuid, n});
    return p == it->second.end() ? nullptr : &p->second;
  }

private:
  const catalog &m_catalog;
  const template_library &m_lib;
  const application_source *m_source;
  std::map<std::pair<std::string, std::string>, application_picks> m_picks;
};

} // namespace

nlohmann::ordered_json export_json(const catalog &c, const template_library &lib,
                                   const lowered_names_fn &lowered,
                                   const application_source *apps) {
  picks_by_workload picks(c, lib, apps);
  ordered_json out;
  out["format"] = "reducetune-dispatch";
  out["schema_version"] = current_schema_version();
  out["size_rule"] = "nearest measured size on a log2 scale, ties to the larger; "
                     "a rule applies from min_n";
  out["grid_rule"] = "grid(n) = min(ceil_div(n, items_per_block), max_blocks), no cap when "
                     "max_blocks is 0; multipass repeats it over the partials";
  if (has_axis_tables(c)) // only then: whole-array exports stay as they were
    out["shape_rule"] = shape_rule_text;
  auto &devices = out["devices"] = ordered_json::array();
  for (const auto &d : c.devices()) {
    ordered_json dev;
    dev["name"] = d.device.name;
    dev["uuid"] = d.device.uuid;
    dev["compute_capability"] = d.device.compute_capability();
    dev["sm_count"] = d.device.sm_count;
    dev["driver_version"] = d.device.driver_version;
    dev["toolkit_version"] = d.device.toolkit_version;
    auto &tables = dev["tables"] = ordered_json::array();
    for (const auto &t : d.tables) {
      ordered_json table{{"dtype", t.dtype}, {"op", t.op}};
      auto &rules = table["rules"] = ordered_json::array();
      for (const auto &e : t.entries) {
        auto rule = export_rule_json(e, d.device, lib, lowered);
        if (const auto *p = picks.find(t.dtype, t.op, d.device.uuid, e.bucket_n))
          rule["application"] = application_pick_json(*p);
        rules.push_back(std::move(rule));
      }
      tables.push_back(std::move(table));
    }
    if (!d.axis_tables.empty())
      dev["axis_tables"] = axis_tables_json(d, lib, lowered);
    devices.push_back(std::move(dev));
  }
  return out;
}

} // namespace reducetune::db
