// Reading and validating a family.json. Every check names the file and the offending item, so
// that a user bringing their own family learns what to fix without reading this code.
#include "reducetune/space/builtins.hpp"
#include "reducetune/space/family.hpp"
#include "reducetune/space/name_pattern.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/template_library.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace reducetune {
namespace {

using json = nlohmann::json;

class reader {
public:
  reader(std::string folder, const template_library *lib)
      : m_folder(std::move(folder)), m_lib(lib) {}

  family read(const std::string &text) {
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
                "requires", "expected"});
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
    read_expected(doc, f);
    check_lets(doc["parameters"], f);
    return f;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw invalid_configuration("template family '" + m_folder + "' (" + m_folder +
                                "/family.json): " + what);
  }

  static bool is_identifier(const std::string &s) {
    return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
           std::all_of(s.begin(), s.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
           });
  }

  // Words that end up in labels (family names, string values, label prefixes): no '.'.
  static bool is_label_word(const std::string &s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
  }

  void check_keys(const json &obj, const std::string &where,
                  std::initializer_list<const char *> allowed) const {
    for (const auto &[key, _] : obj.items()) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char *a) { return key == a; })) {
        std::string list;
        for (const char *a : allowed)
          list += (list.empty() ? "" : ", ") + std::string(a);
        fail(where + ": unknown key \"" + key + "\" (known: " + list + ")");
      }
    }
  }

  const json &required(const json &obj, const char *key, const std::string &where) const {
    if (!obj.contains(key))
      fail(where + " lacks \"" + key + "\"");
    return obj[key];
  }

  std::string required_string(const json &obj, const char *key, const std::string &where) const {
    const json &v = required(obj, key, where);
    if (!v.is_string() || v.get<std::string>().empty())
      fail(where + ": \"" + key + "\" must be a non-empty string");
    return v.get<std::string>();
  }

  std::string optional_string(const json &obj, const char *key, const std::string &where) const {
    if (!obj.contains(key))
      return {};
    if (!obj[key].is_string())
      fail(where + ": \"" + key + "\" must be a string");
    return obj[key].get<std::string>();
  }

  // An expression given as a string, or as an integer literal.
  expression expr(const json &v, const std::string &where, bool allow_n = false) const {
    std::string text;
    if (v.is_string())
      text = v.get<std::string>();
    else if (v.is_number_integer())
      text = std::to_string(v.get<std::int64_t>());
    else if (v.is_boolean())
      text = v.get<bool>() ? "1" : "0";
    else
      fail(where + ": an expression must be a string or an integer, not " + v.dump());
    expression e;
    try {
      e = expression::parse(text);
    } catch (const invalid_configuration &err) {
      fail(where + ": " + err.what());
    }
    for (const auto &id : e.identifiers())
      if (!m_names.count(id) && !(allow_n && id == "n"))
        fail(where + ": expression '" + text + "' names unknown identifier '" + id + "'" +
             (id == "n" ? " ('n' is known only in the grid expression)" : ""));
    return e;
  }

  // The protocol is an expression; a bare protocol name that is not an identifier of the
  // family ("two_pass") is read as the literal it obviously means.
  expression protocol_expr(const json &doc) const {
    const json &v = required(doc, "protocol", "the declaration");
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      static const std::set<std::string> names = {"multipass", "two_pass", "atomic", "ticket"};
      if (names.count(s) && !m_names.count(s))
        return expression::parse("'" + s + "'");
    }
    return expr(v, "protocol");
  }

  void read_includes(const json &doc, family &f) const {
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

  parameter_value read_value(const json &item, const std::string &where) const {
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

  void read_parameters(const json &doc, family &f) {
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

  void read_default(const json &pj, parameter &p, const std::string &where) const {
    if (!pj.contains("default"))
      return; // the first value
    const json &d = pj["default"];
    value v;
    if (d.is_number_integer())
      v = d.get<std::int64_t>();
    else if (d.is_string())
      v = d.get<std::string>();
    else
      fail(where + ": the default must be an integer or a string, not " + d.dump());
    const auto idx = p.index_of(v);
    if (!idx)
      fail(where + ": the default " + to_literal(v) + " is not among its values (" +
           p.values_text() + ")");
    p.default_index = *idx;
  }

  void read_flags(const json &pj, parameter &p, const std::string &where) const {
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

  // Every identifier an expression may name: built-ins, parameters, and every let binding.
  void collect_names(const family &f) {
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
  void check_lets(const json &params, family &f) const {
    for (std::size_t i = 0; i < f.parameters.size(); ++i) {
      auto &p = f.parameters[i];
      const json &values = params[i]["values"];
      for (std::size_t k = 0; k < p.values.size(); ++k)
        for (auto &[name, e] : p.values[k].let)
          e = expr(values[k]["let"][name], "parameter '" + p.name + "', value " +
                                               to_literal(p.values[k].v) + ", let '" + name + "'");
    }
  }

  void read_constraints(const json &doc, family &f) const {
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

  void read_kernels(const json &doc, family &f) const {
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

  void read_presets(const json &doc, family &f) const {
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
        value v;
        if (vj.is_number_integer())
          v = vj.get<std::int64_t>();
        else if (vj.is_string())
          v = vj.get<std::string>();
        else
          fail(where + ": the value of '" + name + "' must be an integer or a string");
        if (!p->index_of(v))
          fail(where + ": " + to_literal(v) + " is not a value of '" + name + "' (" +
               p->values_text() + ")");
        pr.values.emplace(name, std::move(v));
      }
      f.presets.push_back(std::move(pr));
    }
  }

  void read_expected(const json &doc, family &f) const {
    f.expected = optional_string(doc, "expected", "the declaration");
    static const std::set<std::string> outcomes = {"ok", "compile_error", "launch_error",
                                                   "verification_error"};
    if (!f.expected.empty() && !outcomes.count(f.expected))
      fail("\"expected\" is '" + f.expected +
           "' (known: ok, compile_error, launch_error, verification_error)");
  }

  void read_requires(const json &doc, family &f) const {
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

  std::string m_folder;
  const template_library *m_lib;
  std::set<std::string> m_names;
};

} // namespace

family family::from_json(const std::string &folder, const std::string &json_text,
                         const template_library *lib) {
  reader r(folder, lib);
  return r.read(json_text);
}

} // namespace reducetune
