// Reading and validating a family.json (family::from_json), shared by the files that hold its
// parts: family_reader.cpp (the checks every part uses: keys, strings, expressions),
// family_json.cpp (the declaration's top level, kernels, presets) and
// family_json_parameters.cpp (parameters, their values, defaults, flags and lets). Every
// check names the file and the offending item, so that a user bringing their own family learns
// what to fix without reading this code. Nothing outside these files includes it.
#pragma once

#include "reducetune/space/family.hpp"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <set>
#include <string>

namespace reducetune {

class template_library;

namespace detail {

class family_reader {
public:
  using json = nlohmann::json;

  family_reader(std::string folder, const template_library *lib)
      : m_folder(std::move(folder)), m_lib(lib) {}

  family read(const std::string &text);

private:
  // family_reader.cpp
  [[noreturn]] void fail(const std::string &what) const;
  static bool is_identifier(const std::string &s);
  static bool is_label_word(const std::string &s);
  void check_keys(const json &obj, const std::string &where,
                  std::initializer_list<const char *> allowed) const;
  const json &required(const json &obj, const char *key, const std::string &where) const;
  std::string required_string(const json &obj, const char *key, const std::string &where) const;
  std::string optional_string(const json &obj, const char *key, const std::string &where) const;
  // An integer or a string (a parameter's value in a preset or its default); `failure` otherwise.
  value scalar(const json &v, const std::string &failure) const;
  expression expr(const json &v, const std::string &where, bool allow_n = false) const;
  expression protocol_expr(const json &doc) const;

  // family_json_parameters.cpp
  parameter_value read_value(const json &item, const std::string &where) const;
  void read_parameters(const json &doc, family &f);
  void read_default(const json &pj, parameter &p, const std::string &where) const;
  void read_flags(const json &pj, parameter &p, const std::string &where) const;
  void collect_names(const family &f);
  void check_lets(const json &params, family &f) const;

  // family_json.cpp
  void read_includes(const json &doc, family &f) const;
  void read_constraints(const json &doc, family &f) const;
  void read_kernels(const json &doc, family &f) const;
  void read_presets(const json &doc, family &f) const;
  void read_expected(const json &doc, family &f) const;
  void read_requires(const json &doc, family &f) const;

  std::string m_folder;
  const template_library *m_lib;
  std::set<std::string> m_names; // every identifier an expression may name
};

} // namespace detail
} // namespace reducetune
