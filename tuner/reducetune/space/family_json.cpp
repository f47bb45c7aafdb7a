// A family.json's top level: the declaration's parts in order, includes, constraints, kernels,
// requirements and the expected outcome (test families); the parameters and the presets, their
// named values, are read in family_json_parameters.cpp.
#include "reducetune/space/family_reader.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/name_pattern.hpp"
#include "reducetune/templates/template_library.hpp"

#include <algorithm>

namespace reducetune::detail {

using json = family_reader::json;

family family_reader::read(const std::string &text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    fail("not valid JSON: " + std::string(e.what()));
  }
  if (!doc.is_object())
    fail("the top level must be an object");
  check_keys(doc, "the declaration",
             {"family", "description", "source", "includes", "parameters", "constraints",
              "shared_bytes", "dynamic_shared_bytes", "protocol", "grid", "kernels", "presets",
              "requires", "expected", "abi"});
  family f;
  f.name = required_string(doc, "family", "the declaration");
  if (f.name != m_folder)
    fail("\"family\" is '" + f.name + "' but the folder is '" + m_folder + "'");
  if (!is_label_word(f.name))
    fail("the family name '" + f.name + "' may hold only letters, digits and '_'");
  f.description = optional_string(doc, "description", "the declaration");
  f.source = required_string(doc, "source", "the declaration");
  if (m_lib && !m_lib->read(f.name + "/" + f.source))
    fail("the source '" + f.source + "' is not in the library (" + m_lib->origin() + ")");
  read_includes(doc, f);
  read_parameters(doc, f);
  collect_names(f);
  read_constraints(doc, f);
  f.shared_bytes = doc.contains("shared_bytes") ? expr(doc["shared_bytes"], "shared_bytes")
                                                : expression::parse("0");
  if (doc.contains("dynamic_shared_bytes"))
    f.dynamic_shared_bytes = expr(doc["dynamic_shared_bytes"], "dynamic_shared_bytes");
  f.protocol = protocol_expr(doc);
  f.grid = expr(required(doc, "grid", "the declaration"), "grid", /*allow_n=*/true);
  read_kernels(doc, f);
  read_presets(doc, f);
  read_requires(doc, f);
  if (doc.contains("abi")) {
    f.abi = required_string(doc, "abi", "the declaration");
    if (f.abi != "whole_array" && f.abi != "axis")
      fail("\"abi\": unknown kernel ABI '" + f.abi + "' (known: \"whole_array\", \"axis\")");
  }
  read_expected(doc, f);
  check_lets(doc["parameters"], f);
  return f;
}

void family_reader::read_includes(const json &doc, family &f) const {
  if (!doc.contains("includes"))
    return;
  const json &inc = doc["includes"];
  if (!inc.is_array())
    fail("\"includes\" must be an array of folder names");
  for (const auto &i : inc) {
    if (!i.is_string() || i.get<std::string>().empty())
      fail("\"includes\" must hold folder names, not " + i.dump());
    f.includes.push_back(i.get<std::string>());
    if (m_lib && m_lib->paths_under(f.includes.back() + "/").empty())
      fail("includes '" + f.includes.back() + "', which is not a folder of the library (" +
           m_lib->origin() + ")");
  }
}

void family_reader::read_constraints(const json &doc, family &f) const {
  if (!doc.contains("constraints"))
    return;
  if (!doc["constraints"].is_array())
    fail("\"constraints\" must be an array of {\"expr\", \"why\"}");
  for (std::size_t i = 0; i < doc["constraints"].size(); ++i) {
    const json &c = doc["constraints"][i];
    const std::string where = "constraint #" + std::to_string(i + 1);
    if (!c.is_object())
      fail(where + " must be an object {\"expr\", \"why\"}");
    check_keys(c, where, {"expr", "why"});
    f.constraints.push_back(
        {expr(required(c, "expr", where), where), required_string(c, "why", where)});
  }
}

void family_reader::read_kernels(const json &doc, family &f) const {
  const json &k = required(doc, "kernels", "the declaration");
  if (!k.is_object() || k.empty())
    fail("\"kernels\" must be a non-empty object of role: name expression");
  for (const auto &[role, pattern] : k.items()) {
    const std::string where = "kernel '" + role + "'";
    if (role != "pass" && role != "final" && role != "init")
      fail(where + ": the role is none of pass, final, init");
    if (!pattern.is_string() || pattern.get<std::string>().empty())
      fail(where + ": the name expression must be a non-empty string");
    std::vector<std::string> names;
    try {
      names = name_pattern_fields(pattern.get<std::string>());
    } catch (const invalid_configuration &e) {
      fail(where + ": " + e.what());
    }
    for (const auto &n : names) {
      if (n == "T" || n == "Op")
        continue;
      const parameter *p = f.find_parameter(n);
      if (!p)
        fail(where + ": {" + n + "} is neither a parameter nor T or Op");
      if (p->kind != parameter_kind::compile)
        fail(where + ": {" + n + "} is a launch parameter, which cannot change a kernel's name");
      if (p->cpp.empty() &&
          std::any_of(p->values.begin(), p->values.end(),
                      [](const parameter_value &pv) { return is_string(pv.v); }))
        fail(where + ": {" + n + "} has string values but no \"cpp\" pattern to spell them");
    }
    f.kernels.emplace(role, pattern.get<std::string>());
  }
  if (!f.kernels.count("pass"))
    fail("\"kernels\" lacks the \"pass\" role");
}

void family_reader::read_expected(const json &doc, family &f) const {
  f.expected = optional_string(doc, "expected", "the declaration");
  static const std::set<std::string> outcomes = {"ok", "compile_error", "launch_error",
                                                 "verification_error"};
  if (!f.expected.empty() && !outcomes.count(f.expected))
    fail("\"expected\" is '" + f.expected +
         "' (known: ok, compile_error, launch_error, verification_error)");
}

void family_reader::read_requires(const json &doc, family &f) const {
  if (!doc.contains("requires"))
    return;
  json r = doc["requires"];
  if (r.is_string())
    r = json::array({r});
  if (!r.is_array())
    fail("\"requires\" must be \"rdc\" or an array of requirements");
  for (const auto &item : r) {
    if (!item.is_string() || item.get<std::string>() != "rdc")
      fail("\"requires\": unknown requirement " + item.dump() + " (known: \"rdc\")");
    f.requires_rdc = true;
  }
}

} // namespace reducetune::detail

namespace reducetune {

family family::from_json(const std::string &folder, const std::string &json_text,
                         const template_library *lib) {
  detail::family_reader r(folder, lib);
  return r.read(json_text);
}

} // namespace reducetune
