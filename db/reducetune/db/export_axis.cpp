// export_axis: the axis family's rules in both exports (export_axis.hpp).
#include "reducetune/db/export_axis.hpp"

#include "reducetune/db/axis_picks.hpp"
#include "reducetune/db/cxx_names.hpp"
#include "reducetune/db/shape_rule.hpp"

#include <cstdio>
#include <sstream>
#include <variant>

namespace reducetune::db {
namespace {

using ordered_json = nlohmann::ordered_json;

using detail::kernels_json;

// Why an application cannot launch the rule from what the exports say ("" when it can): a
// tile_ticket point's pass also needs its counters (a zeroed scratch after the partials), which
// the exported fields do not describe; reducetune's runtime runs it.
std::string not_exported(const std::variant<axis_launch_rule, std::string> &rule) {
  const axis_launch_rule *l = std::get_if<axis_launch_rule>(&rule);
  if (l == nullptr) return std::get<std::string>(rule);
  if (l->ticket_columns > 0)
    return "its split finishes in the pass (tile_ticket), with one zeroed counter per tile after "
           "the partials, which this export does not describe: reducetune's runtime runs it";
  return "";
}

void put_axis_launch(ordered_json &r, const std::variant<axis_launch_rule, std::string> &rule) {
  const axis_launch_rule *l = std::get_if<axis_launch_rule>(&rule);
  r["batch_invariant"] = l != nullptr && l->batch_invariant;
  const std::string why = not_exported(rule);
  r["launchable"] = why.empty();
  if (!why.empty()) {
    r["why"] = why;
    return;
  }
  r["block_size"] = l->block_size;
  r["grid"] = {{"expression", l->grid_expression}, {"at_shape", l->grid}};
  r["split"] = l->split;
  r["kernels"] = kernels_json(l->kernels);
}

// A lone call's median where `reducetune calibrate` timed the point, else null.
ordered_json application_json(const catalog_entry &e) {
  return e.application_s ? ordered_json(*e.application_s) : ordered_json();
}

ordered_json pick_json(const catalog_entry &e) {
  return {{"family", e.variant.family},
          {"variant", e.variant.label},
          {"launch", e.launch_label},
          {"determinism", e.variant.determinism},
          {"flags", detail::parsed_json(e.variant.flags_json, ordered_json::array())},
          {"median_s", e.median_s},
          {"application_s", application_json(e)}};
}

ordered_json rule_json(const axis_pick &p, const device_record &d, const template_library &lib,
                       const lowered_names_fn &lowered) {
  const catalog_entry &e = *p.fastest;
  ordered_json r;
  r["outer"] = p.shape.outer;
  r["r"] = p.shape.r;
  r["inner"] = p.shape.inner;
  r["variant"] = e.variant.label;
  r["launch"] = e.launch_label;
  r["family"] = e.variant.family;
  r["compile_parameters"] = detail::parsed_json(e.variant.parameters_json, ordered_json::object());
  r["launch_parameters"] = detail::parsed_json(e.launch_parameters_json, ordered_json::object());
  r["flags"] = detail::parsed_json(e.variant.flags_json, ordered_json::array());
  r["determinism"] = e.variant.determinism;
  put_axis_launch(r, axis_launch_rule_of(lib, d, e, p.shape, lowered));
  r["median_s"] = e.median_s;
  r["application_s"] = application_json(e);
  r["gbps"] = e.gbps ? ordered_json(*e.gbps) : ordered_json();
  r["batch_invariant_pick"] = p.invariant ? pick_json(*p.invariant) : ordered_json();
  return r;
}

constexpr std::string_view axis_prelude = R"(
// The axis family (reductions of the middle axis of a contiguous tensor viewed as
// (outer, r, inner) into (outer, inner); reducetune's docs/kernels.md, "Axis family").
struct axis_choice {
  const char *variant; // the measured point's labels
  const char *launch;
  const char *family;
  const char *determinism; // "run_to_run" (every axis point)
  bool batch_invariant;    // a row's order is chosen from r alone, whatever the rows around it
  bool launchable;         // false: the launch fields below are empty and why says why
  const char *why;
  unsigned block_size;
  const char *grid_expression; // over outer, r, inner (kernel ABI: in, out, outer, r, inner,
                               // partials)
  unsigned long long split;    // blocks per output along r; > 1: the final kernel finishes
  const kernel *kernels;
  int kernel_count;
  double median_s; // its median time at the tuned shape, seconds
};
struct axis_rule {
  unsigned long long outer, r, inner; // the tuned shape
  axis_choice pick;
};
struct axis_table {
  const char *device_name;
  int compute_capability;
  const char *dtype;
  const char *op;
  const char *level; // "run_to_run": the fastest point per shape; "batch_invariant": the
                     // fastest batch_invariant one (shapes without one are left out)
  const axis_rule *rules;
  int rule_count;
  const char *const *device_uuids;
  int device_uuid_count;
};

namespace detail {
constexpr bool has_uuid(const axis_table &t, const char *uuid) {
  for (int i = 0; i < t.device_uuid_count; ++i)
    if (same(t.device_uuids[i], uuid))
      return true;
  return false;
}
// reducetune's shape rule (db/shape_rule.hpp), its very source: rows and columns apart, the
// exact shape, else the nearest in (round(log2 r), round(log2 outer*inner)), ties to the larger
// r, then to more outputs, then to the earlier rule.
)";

// shape_rule_source laid out one statement a line, indented by braces (the preprocessor gave
// it as one line); only whitespace changes, outside parentheses, so the code stays the same.
std::string laid_out(std::string_view code) {
  std::string out, indent;
  int parens = 0;
  bool line_start = true;
  for (const char c : code) {
    if (line_start && c == ' ')
      continue;
    if (c == '}' && parens == 0 && indent.size() >= 2)
      indent.resize(indent.size() - 2);
    if (line_start)
      out += indent;
    line_start = false;
    out += c;
    parens += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (parens == 0 && (c == ';' || c == '{' || c == '}')) {
      if (c == '{')
        indent += "  ";
      out += '\n';
      line_start = true;
    }
  }
  return out;
}

std::string axis_select() {
  std::ostringstream h;
  h << R"(
// The axis rule of this type, operator and level ("run_to_run" or "batch_invariant") for the
// device (the device-matching rule of select()), then the tuned shape that answers
// (outer, r, inner) by reducetune's shape rule above; nullptr when nothing answers (reducetune's
// runtime then uses its built-in rule by shape).
constexpr const axis_rule *select_axis(const char *uuid, const char *device_name,
                                       int compute_capability, const char *dtype, const char *op,
                                       const char *level, unsigned long long outer,
                                       unsigned long long r, unsigned long long inner) {
)";
  for (const device_key k : device_match_order) {
    std::string cond(detail::select_condition(k));
    for (std::size_t at = cond.find("tables[i]"); at != std::string::npos;
         at = cond.find("tables[i]", at + 14))
      cond.replace(at, 9, "axis_tables[i]");
    h << "  for (int i = 0; i < axis_table_count; ++i)\n"
      << "    if (detail::same(axis_tables[i].dtype, dtype) && detail::same(axis_tables[i].op, "
         "op) &&\n"
      << "        detail::same(axis_tables[i].level, level) &&\n"
      << "        " << cond << ")\n"
      << "      return detail::answering_shape(axis_tables[i].rules,\n"
      << "                                     axis_tables[i].rules + axis_tables[i].rule_count, "
         "outer, r, inner);\n";
  }
  h << "  return nullptr;\n}\n";
  return h.str();
}

// The kernels array of one choice (into h); its size.
std::size_t axis_kernels(std::ostream &h, const std::string &name, const axis_launch_rule *r) {
  h << "inline constexpr kernel " << name << "[] = {";
  std::size_t count = 0;
  if (r != nullptr)
    for (const auto &k : r->kernels)
      h << (count++ ? ", " : "") << "{" << cxx_string_literal(k.role) << ", "
        << cxx_string_literal(k.name_expression) << ", " << cxx_string_literal(k.lowered) << "}";
  if (count == 0)
    h << "{nullptr, nullptr, nullptr}";
  h << "};\n";
  return count;
}

// One rule's initializer (its kernels array into h).
std::string axis_rule_of(std::ostream &h, const reduction_shape &shape, const catalog_entry &e,
                         const device_record &d, const template_library &lib,
                         const lowered_names_fn &lowered, int index) {
  const auto rule = axis_launch_rule_of(lib, d, e, shape, lowered);
  const std::string why = not_exported(rule);
  const axis_launch_rule *l = std::get_if<axis_launch_rule>(&rule);
  const bool invariant = l != nullptr && l->batch_invariant;
  const axis_launch_rule *r = why.empty() ? l : nullptr; // the launch fields only if launchable
  const auto id = "ak" + std::to_string(index);
  const auto nk = axis_kernels(h, id, r);
  std::ostringstream o;
  o << "    {" << shape.outer << "ull, " << shape.r << "ull, " << shape.inner << "ull, {"
    << cxx_string_literal(e.variant.label) << ", " << cxx_string_literal(e.launch_label) << ", "
    << cxx_string_literal(e.variant.family) << ", "
    << cxx_string_literal(e.variant.determinism) << ", "
    << (invariant ? "true" : "false") << ", " << (r ? "true" : "false") << ", "
    << cxx_string_literal(why) << ", "
    << (r ? r->block_size : 0) << "u, " << cxx_string_literal(r ? r->grid_expression : "")
    << ", " << (r ? r->split : 0) << "ull, " << id << ", " << nk << ", "
    << cxx_double(e.median_s) << "}},\n";
  return o.str();
}

} // namespace

ordered_json detail::parsed_json(const std::string &json, ordered_json fallback) {
  auto j = ordered_json::parse(json, nullptr, false);
  return j.is_discarded() ? fallback : j;
}

ordered_json detail::kernels_json(const std::vector<kernel_ref> &kernels) {
  auto out = ordered_json::array();
  for (const auto &k : kernels)
    out.push_back(
        {{"role", k.role}, {"name_expression", k.name_expression}, {"lowered", k.lowered}});
  return out;
}

bool has_axis_tables(const catalog &c) noexcept {
  for (const auto &d : c.devices())
    if (!d.axis_tables.empty())
      return true;
  return false;
}

nlohmann::ordered_json axis_tables_json(const catalog_device &d, const template_library &lib,
                                        const lowered_names_fn &lowered) {
  auto out = ordered_json::array();
  for (const auto &t : d.axis_tables) {
    ordered_json table{{"dtype", t.dtype}, {"op", t.op}};
    auto &rules = table["rules"] = ordered_json::array();
    for (const auto &p : axis_picks(t, d.device, lib))
      rules.push_back(rule_json(p, d.device, lib, lowered));
    out.push_back(std::move(table));
  }
  return out;
}

} // namespace reducetune::db

namespace reducetune::db {

std::string axis_header(const catalog &c, const template_library &lib,
                        const lowered_names_fn &lowered) {
  if (!has_axis_tables(c))
    return "";
  std::ostringstream h, tables;
  h << axis_prelude << laid_out(shape_rule_source) << "\n";
  int count = 0, index = 0;
  for (const auto &d : c.devices())
    for (const auto &t : d.axis_tables) {
      const auto picks = axis_picks(t, d.device, lib);
      for (const char *level : {"run_to_run", "batch_invariant"}) {
        std::string rules;
        int n = 0;
        for (const auto &p : picks)
          if (const catalog_entry *e = std::string_view(level) == "run_to_run" ? p.fastest
                                                                               : p.invariant) {
            rules += axis_rule_of(h, p.shape, *e, d.device, lib, lowered, index++);
            ++n;
          }
        if (n == 0) // no table, as the runtime keeps none: the next matching device answers
          continue;
        const auto id = std::to_string(count++);
        h << "inline constexpr axis_rule ar" << id << "[] = {\n" << rules << "};\n";
        h << "inline constexpr const char *au" << id << "[] = {";
        for (std::size_t u = 0; u < d.uuids.size(); ++u)
          h << (u ? ", " : "") << cxx_string_literal(d.uuids[u]);
        h << (d.uuids.empty() ? "nullptr};\n" : "};\n");
        tables << "    {" << cxx_string_literal(d.device.name) << ", "
               << d.device.compute_capability() << ", " << cxx_string_literal(t.dtype) << ", "
               << cxx_string_literal(t.op) << ", " << cxx_string_literal(level)
               << ", detail::ar" << id << ", " << n << ", detail::au" << id << ", "
               << d.uuids.size() << "},\n";
      }
    }
  h << "} // namespace detail\n\ninline constexpr axis_table axis_tables[] = {\n" << tables.str()
    << "};\ninline constexpr int axis_table_count = " << count << ";\n" << axis_select();
  return h.str();
}

} // namespace reducetune::db
