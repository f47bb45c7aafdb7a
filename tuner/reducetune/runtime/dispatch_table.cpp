#include "reducetune/runtime/dispatch_table.hpp"

#include "reducetune/db/catalog.hpp"
#include "reducetune/errors.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>

namespace reducetune {
namespace {

using nlohmann::json;

bool accepted(const dispatch_rule &r, const point_selection &s) {
  if (r.flagged && !s.allow_flagged)
    return false;
  return !s.deterministic_only || r.determinism == "run_to_run";
}

// Only the fields the reducer uses; a rule missing one is a malformed document.
dispatch_rule rule_of(const json &r) {
  dispatch_rule out;
  out.bucket_n = r.at("bucket_n").get<std::uint64_t>();
  out.family = r.at("family").get<std::string>();
  out.variant = r.at("variant").get<std::string>();
  out.launch = r.at("launch").get<std::string>();
  out.determinism = r.value("determinism", std::string{"unknown"});
  out.flagged = r.contains("flags") && r["flags"].is_array() && !r["flags"].empty();
  return out;
}

// The export's application pick of a rule (db/application_ranking.hpp), where it has one.
std::optional<dispatch_rule> application_of(const json &r) {
  if (!r.contains("application"))
    return std::nullopt;
  const json &a = r.at("application");
  return dispatch_rule{r.at("bucket_n").get<std::uint64_t>(), a.at("family").get<std::string>(),
                       a.at("variant").get<std::string>(), a.at("launch").get<std::string>(),
                       a.value("determinism", std::string{"unknown"}),
                       a.value("flagged", false)};
}

std::vector<dispatch_rule> rules_of(const json &dev, const std::string &type,
                                    const std::string &op, const point_selection &s,
                                    bool application) {
  std::vector<dispatch_rule> out;
  for (const auto &t : dev.at("tables")) {
    if (t.at("dtype") != type || t.at("op") != op)
      continue;
    for (const auto &r : t.at("rules")) {
      // The application pick where asked for and admitted, else the median's winner.
      if (const auto pick = application ? application_of(r) : std::nullopt;
          pick && accepted(*pick, s))
        out.push_back(*pick);
      else if (dispatch_rule rule = rule_of(r); accepted(rule, s))
        out.push_back(std::move(rule));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto &a, const auto &b) { return a.bucket_n < b.bucket_n; });
  return out;
}

} // namespace

dispatch_table dispatch_table::from_catalog(const db::catalog &c, dtype type, reduce_op op) {
  dispatch_table out;
  for (const auto &d : c.devices()) {
    dispatch_device dev{d.device.name, d.device.uuid, d.device.compute_capability(), {}};
    for (const auto &t : d.tables) {
      if (t.dtype != to_string(type) || t.op != to_string(op))
        continue;
      for (const auto &e : t.entries)
        dev.rules.push_back({e.bucket_n, e.variant.family, e.variant.label, e.launch_label,
                             e.variant.determinism, e.variant.flagged()});
    }
    if (!dev.rules.empty())
      out.m_devices.push_back(std::move(dev));
  }
  return out;
}

dispatch_table dispatch_table::from_json(const json &doc, dtype type, reduce_op op,
                                         const point_selection &selection, bool application) {
  if (!doc.is_object() || doc.value("format", std::string{}) != "reducetune-dispatch")
    throw invalid_configuration("not a reducetune dispatch table (expected \"format\": "
                                "\"reducetune-dispatch\", as `reducetune export json` writes)");
  dispatch_table out;
  try {
    for (const auto &d : doc.at("devices")) {
      dispatch_device dev{d.at("name").get<std::string>(), d.value("uuid", std::string{}),
                          d.at("compute_capability").get<int>(), {}};
      dev.rules = rules_of(d, to_string(type), to_string(op), selection, application);
      if (!dev.rules.empty())
        out.m_devices.push_back(std::move(dev));
    }
  } catch (const json::exception &e) {
    throw invalid_configuration(std::string{"malformed dispatch table: "} + e.what());
  }
  return out;
}

json dispatch_table::read_file(const std::filesystem::path &path) {
  std::ifstream in(path);
  if (!in)
    throw invalid_configuration("cannot read the dispatch table " + path.string());
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded())
    throw invalid_configuration(path.string() + " is not JSON (expected `reducetune export "
                                "json` output)");
  return doc;
}

dispatch_table dispatch_table::from_json_file(const std::filesystem::path &path, dtype type,
                                              reduce_op op, const point_selection &selection,
                                              bool application) {
  return from_json(read_file(path), type, op, selection, application);
}

const dispatch_device *dispatch_table::device_for(const std::string &uuid, const std::string &name,
                                                  int compute_capability) const noexcept {
  for (const auto &d : m_devices)
    if (d.any_device)
      return &d;
  for (const auto &d : m_devices)
    if (!uuid.empty() && d.uuid == uuid)
      return &d;
  for (const auto &d : m_devices)
    if (d.name == name)
      return &d;
  for (const auto &d : m_devices)
    if (d.compute_capability == compute_capability)
      return &d;
  return nullptr;
}

const dispatch_rule *dispatch_table::rule_for(const dispatch_device &d, std::uint64_t n) noexcept {
  std::vector<std::uint64_t> sizes;
  sizes.reserve(d.rules.size());
  for (const auto &r : d.rules)
    sizes.push_back(r.bucket_n);
  const auto i = db::nearest_bucket(sizes, n);
  return i ? &d.rules[*i] : nullptr;
}

} // namespace reducetune
