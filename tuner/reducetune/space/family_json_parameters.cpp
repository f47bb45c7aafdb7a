// A family.json's parameters: their values (with let bindings), defaults, flags, the presets
// (named sets of their values), and the names that expressions may use. Every value a
// parameter can take from the declaration is read in this file.
#include "reducetune/space/family_reader.hpp"

#include "reducetune/space/builtins.hpp"

#include <algorithm>
#include <map>

namespace reducetune::detail {

using json = family_reader::json;

parameter_value family_reader::read_value(const json &item, const std::string &where) const {
  parameter_value pv;
  const json *v = &item;
  if (item.is_object()) {
    check_keys(item, where, {"value", "let"});
    v = &required(item, "value", where);
    if (item.contains("let")) {
      if (!item["let"].is_object())
        fail(where + ": \"let\" must be an object of name: expression");
      for (const auto &[name, e] : item["let"].items()) {
        if (!is_identifier(name))
          fail(where + ": let name '" + name + "' is not an identifier");
        pv.let.emplace(name, expression{}); // parsed in check_lets, once every name is known
      }
    }
  }
  if (v->is_number_integer())
    pv.v = v->get<std::int64_t>();
  else if (v->is_string()) {
    pv.v = v->get<std::string>();
    if (!is_label_word(v->get<std::string>()))
      fail(where + ": the value '" + v->get<std::string>() +
           "' may hold only letters, digits and '_'");
  } else
    fail(where + ": a value must be an integer, a string or {\"value\", \"let\"}, not " +
         v->dump());
  return pv;
}

void family_reader::read_parameters(const json &doc, family &f) {
  const json &params = required(doc, "parameters", "the declaration");
  if (!params.is_array() || params.empty())
    fail("\"parameters\" must be a non-empty array");
  std::set<std::string> compile_labels, launch_labels;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const json &pj = params[i];
    std::string where = "parameter #" + std::to_string(i + 1);
    if (!pj.is_object())
      fail(where + " must be an object");
    check_keys(
        pj, where,
        {"name", "kind", "values", "default", "cpp", "label", "flags", "note", "description"});
    parameter p;
    p.name = required_string(pj, "name", where);
    where = "parameter '" + p.name + "'";
    if (!is_identifier(p.name))
      fail(where + ": the name is not an identifier");
    if (is_builtin_identifier(p.name))
      fail(where + ": the name is a built-in identifier");
    if (f.find_parameter(p.name))
      fail(where + " is declared twice");
    const std::string kind = required_string(pj, "kind", where);
    if (kind != "compile" && kind != "launch")
      fail(where + ": kind '" + kind + "' is neither 'compile' nor 'launch'");
    p.kind = kind == "compile" ? parameter_kind::compile : parameter_kind::launch;
    p.note = optional_string(pj, pj.contains("note") ? "note" : "description", where);
    p.cpp = optional_string(pj, "cpp", where);
    if (!p.cpp.empty() && p.cpp.find("{value}") == std::string::npos)
      fail(where + ": the cpp pattern '" + p.cpp + "' lacks {value}");
    p.label = pj.contains("label") ? required_string(pj, "label", where) : p.name;
    if (!is_label_word(p.label))
      fail(where + ": the label '" + p.label + "' may hold only letters, digits and '_'");
    auto &labels = p.kind == parameter_kind::compile ? compile_labels : launch_labels;
    if (!labels.insert(p.label).second)
      fail(where + ": the label '" + p.label + "' is used by another " + kind + " parameter");
    const json &values = required(pj, "values", where);
    if (!values.is_array() || values.empty())
      fail(where + ": \"values\" must be a non-empty array");
    for (const auto &item : values) {
      p.values.push_back(read_value(item, where));
      const value &v = p.values.back().v;
      if (p.index_of(v) != p.values.size() - 1)
        fail(where + ": the value " + to_literal(v) + " is listed twice");
    }
    read_default(pj, p, where);
    read_flags(pj, p, where);
    f.parameters.push_back(std::move(p));
  }
}

void family_reader::read_default(const json &pj, parameter &p, const std::string &where) const {
  if (!pj.contains("default"))
    return; // the first value
  const json &d = pj["default"];
  const value v =
      scalar(d, where + ": the default must be an integer or a string, not " + d.dump());
  const auto idx = p.index_of(v);
  if (!idx)
    fail(where + ": the default " + to_literal(v) + " is not among its values (" +
         p.values_text() + ")");
  p.default_index = *idx;
}

void family_reader::read_flags(const json &pj, parameter &p, const std::string &where) const {
  if (!pj.contains("flags"))
    return;
  if (!pj["flags"].is_object())
    fail(where + ": \"flags\" must be an object of value: warning");
  for (const auto &[key, text] : pj["flags"].items()) {
    auto it = std::find_if(p.values.begin(), p.values.end(),
                           [&](const parameter_value &pv) { return to_string(pv.v) == key; });
    if (it == p.values.end())
      fail(where + ": flags the value '" + key + "', which is not among its values (" +
           p.values_text() + ")");
    if (!text.is_string() || text.get<std::string>().empty())
      fail(where + ": the flag of '" + key + "' must be a non-empty string");
    it->flag = text.get<std::string>();
  }
}

// A preset is a named set of parameter values, each checked against its parameter's declared
// values here, beside them.
void family_reader::read_presets(const json &doc, family &f) const {
  if (!doc.contains("presets"))
    return;
  if (!doc["presets"].is_array())
    fail("\"presets\" must be an array");
  for (const auto &pj : doc["presets"]) {
    if (!pj.is_object())
      fail("a preset must be an object {\"name\", \"values\", \"note\"}");
    preset pr;
    pr.name = required_string(pj, "name", "a preset");
    const std::string where = "preset '" + pr.name + "'";
    check_keys(pj, where, {"name", "values", "note"});
    if (!is_label_word(pr.name))
      fail(where + ": the name may hold only letters, digits and '_'");
    if (std::any_of(f.presets.begin(), f.presets.end(),
                    [&](const preset &o) { return o.name == pr.name; }))
      fail(where + " is declared twice");
    pr.note = optional_string(pj, "note", where);
    const json &values = required(pj, "values", where);
    if (!values.is_object())
      fail(where + ": \"values\" must be an object of parameter: value");
    for (const auto &[name, vj] : values.items()) {
      const parameter *p = f.find_parameter(name);
      if (!p)
        fail(where + " names the unknown parameter '" + name + "'");
      const value v =
          scalar(vj, where + ": the value of '" + name + "' must be an integer or a string");
      if (!p->index_of(v))
        fail(where + ": " + to_literal(v) + " is not a value of '" + name + "' (" +
             p->values_text() + ")");
      pr.values.emplace(name, std::move(v));
    }
    f.presets.push_back(std::move(pr));
  }
}

// Every identifier an expression may name: built-ins, parameters, and every let binding.
void family_reader::collect_names(const family &f) {
  m_names.insert(builtin_identifiers().begin(), builtin_identifiers().end());
  m_names.erase("n");
  for (const auto &p : f.parameters)
    m_names.insert(p.name);
  std::map<std::string, std::string> owner; // let name → parameter
  for (const auto &p : f.parameters)
    for (const auto &pv : p.values)
      for (const auto &[name, _] : pv.let) {
        if (is_builtin_identifier(name) || f.find_parameter(name))
          fail("parameter '" + p.name + "', value " + to_literal(pv.v) + ": let '" + name +
               "' hides a " + (f.find_parameter(name) ? "parameter" : "built-in identifier"));
        // Two parameters binding one name would make its value depend on which wins.
        const auto [it, fresh] = owner.emplace(name, p.name);
        if (!fresh && it->second != p.name)
          fail("let '" + name + "' is bound by both parameter '" + it->second + "' and '" +
               p.name + "'");
        m_names.insert(name);
      }
}

// Parsed after every other part because the names a let may use are known only then.
void family_reader::check_lets(const json &params, family &f) const {
  for (std::size_t i = 0; i < f.parameters.size(); ++i) {
    auto &p = f.parameters[i];
    const json &values = params[i]["values"];
    for (std::size_t k = 0; k < p.values.size(); ++k)
      for (auto &[name, e] : p.values[k].let)
        e = expr(values[k]["let"][name], "parameter '" + p.name + "', value " +
                                             to_literal(p.values[k].v) + ", let '" + name + "'");
  }
}

} // namespace reducetune::detail
