// export_header: the Catalog as a self-contained C++17 header (export.hpp has its shape).
#include "reducetune/db/export.hpp"

#include <cctype>
#include <cstdio>
#include <sstream>
#include <variant>

#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/errors.hpp"

namespace reducetune::db {
namespace {

// A C++ string literal for any bytes: only printable ASCII passes through; everything else,
// quotes and backslashes included, is escaped (octal, so no following digit can extend it).
std::string literal(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

void check_namespace(std::string_view ns) {
  bool ok = !ns.empty();
  for (std::size_t i = 0; ok && i < ns.size(); ++i) {
    const auto c = static_cast<unsigned char>(ns[i]);
    ok = std::isalnum(c) || c == '_' || (c == ':' && i + 1 < ns.size() && ns[i + 1] == ':') ||
         (c == ':' && i > 0 && ns[i - 1] == ':');
  }
  if (!ok || std::isdigit(static_cast<unsigned char>(ns[0])))
    throw invalid_configuration("export namespace '" + std::string(ns) +
                                "' is not a C++ namespace name");
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
constexpr const choice *pick(const table &t, unsigned long long n) {
  const choice *c = nullptr;
  for (int i = 0; i < t.rule_count; ++i)
    if (t.rules[i].min_n <= n)
      c = &t.rules[i].pick;
  return c;
}
)";

constexpr std::string_view header_select = R"(
// The table of this exact device name, else the first of this compute capability; then the
// last rule whose min_n <= n. nullptr when nothing was measured for this type and operator.
constexpr const choice *select(const char *device_name, int compute_capability,
                               const char *dtype, const char *op, unsigned long long n) {
  for (int i = 0; i < table_count; ++i)
    if (detail::same(tables[i].device_name, device_name) && detail::same(tables[i].dtype, dtype) &&
        detail::same(tables[i].op, op))
      return detail::pick(tables[i], n);
  for (int i = 0; i < table_count; ++i)
    if (tables[i].compute_capability == compute_capability && detail::same(tables[i].dtype, dtype) &&
        detail::same(tables[i].op, op))
      return detail::pick(tables[i], n);
  return nullptr;
}
)";

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
      tables << "    {" << literal(d.device.name) << ", " << d.device.compute_capability() << ", "
             << literal(t.dtype) << ", " << literal(t.op) << ", detail::" << rname << ", "
             << t.entries.size() << "},\n";
      ++table_count;
    }
  }
  h << "} // namespace detail\n\n";
  if (table_count == 0)
    h << "inline constexpr table tables[1] = {{nullptr, 0, nullptr, nullptr, nullptr, 0}};\n";
  else
    h << "inline constexpr table tables[] = {\n" << tables.str() << "};\n";
  h << "inline constexpr int table_count = " << table_count << ";\n" << header_select;
  h << "\n} // namespace " << ns << "\n";
  return h.str();
}

} // namespace reducetune::db
