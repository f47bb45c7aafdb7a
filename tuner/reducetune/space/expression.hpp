// The expression language of family declarations (docs/architecture.md, "Expressions"):
// int64 and string values, + - * / %, comparisons, && || ! (short-circuit), ?:, parentheses,
// and min max ceil_div log2 is_pow2. An expression is parsed once into an AST and evaluated
// many times, against a scope that names the identifiers.
//
// Every error is an invalid_configuration that quotes the expression; parse errors also give
// the 0-based position of the offending character.
#pragma once

#include "reducetune/space/value.hpp"

#include <map>
#include <memory>
#include <set>
#include <string>

namespace reducetune {

class scope;

namespace detail {
struct expr_node;
struct eval_context;
} // namespace detail

class expression {
public:
  // An empty expression; evaluating it throws. Declarations hold parsed ones.
  expression() = default;
  // Throws invalid_configuration naming the text and position when it is malformed.
  [[nodiscard]] static expression parse(const std::string &text);

  // Throws invalid_configuration for an unknown identifier (named), a type mismatch, division
  // by zero, overflow, or a cycle among the scope's bound expressions.
  [[nodiscard]] value eval(const scope &s) const;
  // eval() that requires an integer (or a string) result.
  [[nodiscard]] std::int64_t eval_int(const scope &s) const;
  [[nodiscard]] std::string eval_string(const scope &s) const;

  [[nodiscard]] const std::string &text() const noexcept { return m_text; }
  // Every identifier the expression mentions (whether or not evaluation would reach it).
  [[nodiscard]] const std::set<std::string> &identifiers() const noexcept { return m_identifiers; }

private:
  friend struct detail::eval_context;
  [[nodiscard]] value eval_in(detail::eval_context &ctx) const;

  std::string m_text;
  std::shared_ptr<const detail::expr_node> m_root;
  std::set<std::string> m_identifiers;
};

// Names → values, or → expressions evaluated lazily (a chosen value's `let` bindings). A bound
// expression is evaluated each time it is looked up, in the scope that looks it up; a cycle
// (a = b + 1, b = a) is reported, never followed. A scope is plain data: copy it to extend it.
class scope {
public:
  void set(const std::string &name, value v);
  void bind(const std::string &name, expression e);
  [[nodiscard]] bool contains(const std::string &name) const { return m_entries.count(name) != 0; }
  // The value of a name (evaluating a bound expression); throws for an unknown name.
  [[nodiscard]] value get(const std::string &name) const;

private:
  friend struct detail::eval_context;
  std::map<std::string, std::variant<value, expression>> m_entries;
};

} // namespace reducetune
