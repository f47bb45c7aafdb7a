// The checks every part of a family.json uses: known keys, required strings, expressions.
#include "reducetune/space/family_reader.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>
#include <cctype>

namespace reducetune::detail {

using json = family_reader::json;

[[noreturn]] void family_reader::fail(const std::string &what) const {
  throw invalid_configuration("template family '" + m_folder + "' (" + m_folder +
                              "/family.json): " + what);
}

bool family_reader::is_identifier(const std::string &s) {
  return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

// Words that end up in labels (family names, string values, label prefixes): no '.'.
bool family_reader::is_label_word(const std::string &s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

void family_reader::check_keys(const json &obj, const std::string &where,
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

const json &family_reader::required(const json &obj, const char *key,
                                    const std::string &where) const {
  if (!obj.contains(key))
    fail(where + " lacks \"" + key + "\"");
  return obj[key];
}

std::string family_reader::required_string(const json &obj, const char *key,
                                           const std::string &where) const {
  const json &v = required(obj, key, where);
  if (!v.is_string() || v.get<std::string>().empty())
    fail(where + ": \"" + key + "\" must be a non-empty string");
  return v.get<std::string>();
}

std::string family_reader::optional_string(const json &obj, const char *key,
                                           const std::string &where) const {
  if (!obj.contains(key))
    return {};
  if (!obj[key].is_string())
    fail(where + ": \"" + key + "\" must be a string");
  return obj[key].get<std::string>();
}

value family_reader::scalar(const json &v, const std::string &failure) const {
  if (v.is_number_integer())
    return v.get<std::int64_t>();
  if (v.is_string())
    return v.get<std::string>();
  fail(failure);
}

// An expression given as a string, or as an integer literal.
expression family_reader::expr(const json &v, const std::string &where, bool allow_n) const {
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
expression family_reader::protocol_expr(const json &doc) const {
  const json &v = required(doc, "protocol", "the declaration");
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    static const std::set<std::string> names = {"multipass", "two_pass", "atomic", "ticket",
                                                 "host"};
    if (names.count(s) && !m_names.count(s))
      return expression::parse("'" + s + "'");
  }
  return expr(v, "protocol");
}

} // namespace reducetune::detail
