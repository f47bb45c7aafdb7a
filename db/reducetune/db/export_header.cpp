// export_header: the Catalog as a self-contained C++17 header (export.hpp has its shape).
#include "reducetune/db/export.hpp"

#include <cctype>
#include <cstdio>
#include <sstream>
#include <variant>

#include "reducetune/db/cxx_names.hpp"
#include "reducetune/db/export_axis.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/errors.hpp"

namespace reducetune::db {
namespace {

std::string literal(std::string_view text) { return cxx_string_literal(text); }
std::string number(double x) { return cxx_double(x); }

void check_namespace(std::string_view ns) {
  if (const std::string why = namespace_problem(ns); !why.empty())
    throw invalid_configuration("export namespace " + why);
}

constexpr std::string_view header_guard = R"(
#if !defined(__cplusplus) || (__cplusplus < 201703L && (!defined(_MSVC_LANG) || _MSVC_LANG < 201703L))
#error "this reducetune dispatch header needs C++17 or later (inline constexpr tables): compile with -std=c++17"
#endif
)";

constexpr std::string_view header_prelude = R"(
struct parameter {
  const char *name;
  const char *value;
};
struct kernel {
  const char *role;            // "init", "pass" or "final", in launch order
  const char *name_expression; // as compiled by NVRTC (reducetune's kernel_templates)
  const char *lowered;         // its mangled name in the cubin ("" when unknown)
};
struct choice {
  const char *variant; // the measured point's labels
  const char *launch;
  const char *family;
  const parameter *compile_parameters;
  int compile_parameter_count;
  const parameter *launch_parameters;
  int launch_parameter_count;
  const char *determinism; // "run_to_run" (same bits every call), "none" (float atomics)
  bool launchable;         // false: the launch fields below are empty and why says why
  const char *why;
  const char *protocol; // "two_pass", "atomic", "ticket" or "multipass"
  unsigned block_size;
  unsigned dynamic_shared_bytes;
  bool in_place;        // the pass overwrites its input (launch it on a scratch copy)
  bool device_launches; // the kernels launch kernels (dynamic parallelism)
  // grid(n) = ceil_div(n, items_per_block), at most max_blocks (0: no cap); multipass applies
  // it again to the partials until one value is left.
  unsigned long long items_per_block;
  unsigned long long max_blocks;
  const kernel *kernels;
  int kernel_count;
  unsigned long long bucket_n; // the measured size this choice comes from
  double median_s;             // its median time there, seconds
};
struct rule {
  unsigned long long min_n; // this rule applies from min_n up to the next rule's min_n
  choice pick;
};
struct table {
  const char *device_name;
  int compute_capability; // major * 10 + minor
  const char *dtype;
  const char *op;
  const rule *rules;
  int rule_count;
  const char *const *device_uuids; // every tuned device of this model
  int device_uuid_count;
};

namespace detail {
constexpr bool same(const char *a, const char *b) {
  if (a == nullptr || b == nullptr)
    return false;
  while (*a != 0 && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}
constexpr bool has_uuid(const table &t, const char *uuid) {
  for (int i = 0; i < t.device_uuid_count; ++i)
    if (same(t.device_uuids[i], uuid))
      return true;
  return false;
}
constexpr const choice *pick(const table &t, unsigned long long n) {
  const choice *c = nullptr;
  for (int i = 0; i < t.rule_count; ++i)
    if (t.rules[i].min_n <= n)
      c = &t.rules[i].pick;
  return c;
}
)";

} // namespace

// select()'s test of one key of the device-matching rule (catalog.hpp, device_match_order), on
// tables[i]; an empty UUID or name and a capability of 0 match nothing, as in the Catalog.
std::string_view detail::select_condition(device_key k) {
  switch (k) {
  case device_key::uuid:
    return "uuid != nullptr && *uuid != 0 && detail::has_uuid(tables[i], uuid)";
  case device_key::name:
    return "device_name != nullptr && *device_name != 0 &&\n"
           "        detail::same(tables[i].device_name, device_name)";
  case device_key::compute_capability:
    return "compute_capability > 0 && tables[i].compute_capability == compute_capability";
  }
  throw invalid_configuration("unknown device key");
}

namespace {

using detail::select_condition;

// select() generated from device_match_order, the Catalog's own rule: one loop per key.
std::string header_select() {
  std::ostringstream h;
  h << R"(
// The table of this type and operator for the device, by reducetune's one device-matching rule
// (db/README.md, "Matching a device"): a device of this UUID, else of this exact name, else the
// first of this compute capability (major * 10 + minor); an empty UUID or name, or a capability
// of 0, matches nothing. Then the last rule whose min_n <= n. nullptr when nothing matches.
constexpr const choice *select(const char *uuid, const char *device_name, int compute_capability,
                               const char *dtype, const char *op, unsigned long long n) {
)";
  for (const device_key k : device_match_order)
    h << "  for (int i = 0; i < table_count; ++i)\n"
      << "    if (detail::same(tables[i].dtype, dtype) && detail::same(tables[i].op, op) &&\n"
      << "        " << select_condition(k) << ")\n"
      << "      return detail::pick(tables[i], n);\n";
  h << R"(  return nullptr;
}
// Without a UUID: the same rule from its next key.
constexpr const choice *select(const char *device_name, int compute_capability,
                               const char *dtype, const char *op, unsigned long long n) {
  return select(nullptr, device_name, compute_capability, dtype, op, n);
}
)";
  return h.str();
}

// An array of parameters from a JSON object {name: value} (strings unquoted); its size.
std::size_t parameter_array(std::ostream &h, const std::string &name, const std::string &json) {
  const auto j = nlohmann::ordered_json::parse(json, nullptr, false);
  h << "inline constexpr parameter " << name << "[] = {";
  std::size_t count = 0;
  if (j.is_object())
    for (const auto &[key, value] : j.items())
      h << (count++ ? ", " : "") << "{" << literal(key) << ", "
        << literal(value.is_string() ? value.get<std::string>() : value.dump()) << "}";
  if (count == 0)
    h << "{nullptr, nullptr}";
  h << "};\n";
  return count;
}

std::size_t kernel_array(std::ostream &h, const std::string &name, const launch_rule *r) {
  h << "inline constexpr kernel " << name << "[] = {";
  std::size_t count = 0;
  if (r != nullptr)
    for (const auto &k : r->kernels)
      h << (count++ ? ", " : "") << "{" << literal(k.role) << ", " << literal(k.name_expression)
        << ", " << literal(k.lowered) << "}";
  if (count == 0)
    h << "{nullptr, nullptr, nullptr}";
  h << "};\n";
  return count;
}

// The arrays of one entry (into h) and its rule's initializer (returned).
std::string rule_of(std::ostream &h, const template_library &lib, const device_record &d,
                    const catalog_entry &e, int index, const lowered_names_fn &lowered) {
  const auto rule = launch_rule_of(lib, d, e, lowered);
  const launch_rule *r = std::get_if<launch_rule>(&rule);
  const auto id = std::to_string(index);
  const auto ncp = parameter_array(h, "cp" + id, e.variant.parameters_json);
  const auto nlp = parameter_array(h, "lp" + id, e.launch_parameters_json);
  const auto nk = kernel_array(h, "k" + id, r);
  std::ostringstream o;
  o << "    {" << e.min_n << "ull, {" << literal(e.variant.label) << ", "
    << literal(e.launch_label) << ", " << literal(e.variant.family) << ", cp" << id << ", " << ncp
    << ", lp" << id << ", " << nlp << ", " << literal(e.variant.determinism) << ", "
    << (r ? "true" : "false") << ", " << literal(r ? "" : std::get<std::string>(rule)) << ", "
    << literal(r ? r->protocol : "") << ", " << (r ? r->block_size : 0) << "u, "
    << (r ? r->dynamic_shared_bytes : 0) << "u, " << (r && r->in_place ? "true" : "false")
    << ", " << (r && r->device_launches ? "true" : "false") << ", "
    << (r ? r->items_per_block : 0) << "ull, " << (r ? r->max_blocks : 0) << "ull, k" << id
    << ", " << nk << ", " << e.bucket_n << "ull, " << number(e.median_s) << "}},\n";
  return o.str();
}

} // namespace

std::string export_header(const catalog &c, const template_library &lib, std::string_view ns,
                          const lowered_names_fn &lowered) {
  check_namespace(ns);
  std::ostringstream h;
  h << "// Generated by reducetune from its results database (schema version "
    << current_schema_version() << "). Do not edit: re-export instead.\n"
    << "// Size rule: the nearest measured size on a log2 scale, ties to the larger size; a "
       "rule's\n"
    << "// min_n is the first n for which its measured size is the nearest.\n"
    << "#pragma once\n" << header_guard << "\nnamespace " << ns << " {\n" << header_prelude;
  std::ostringstream tables;
  int table_count = 0;
  int entry_index = 0;
  for (const auto &d : c.devices()) {
    for (const auto &t : d.tables) {
      std::string rules;
      for (const auto &e : t.entries)
        rules += rule_of(h, lib, d.device, e, entry_index++, lowered);
      const auto rname = "r" + std::to_string(table_count);
      h << "inline constexpr rule " << rname << "[] = {\n" << rules << "};\n";
      const auto uname = "u" + std::to_string(table_count);
      h << "inline constexpr const char *" << uname << "[] = {";
      for (std::size_t u = 0; u < d.uuids.size(); ++u)
        h << (u ? ", " : "") << literal(d.uuids[u]);
      h << (d.uuids.empty() ? "nullptr};\n" : "};\n");
      tables << "    {" << literal(d.device.name) << ", " << d.device.compute_capability() << ", "
             << literal(t.dtype) << ", " << literal(t.op) << ", detail::" << rname << ", "
             << t.entries.size() << ", detail::" << uname << ", " << d.uuids.size() << "},\n";
      ++table_count;
    }
  }
  h << "} // namespace detail\n\n";
  if (table_count == 0)
    h << "inline constexpr table tables[1] = {{nullptr, 0, nullptr, nullptr, nullptr, 0, nullptr, "
         "0}};\n";
  else
    h << "inline constexpr table tables[] = {\n" << tables.str() << "};\n";
  h << "inline constexpr int table_count = " << table_count << ";\n" << header_select();
  h << axis_header(c, lib, lowered); // nothing for a file without axis rows
  h << "\n} // namespace " << ns << "\n";
  return h.str();
}

} // namespace reducetune::db
