// Evaluating a parsed expression against a scope, and the scope itself.
#include "reducetune/space/expression.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/expression_node.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace reducetune {
namespace detail {

// Evaluation state: the scope, and the bound names being evaluated (to report cycles).
struct eval_context {
  const scope &names;
  std::vector<std::string> evaluating;

  value lookup(const std::string &text, const std::string &name) {
    const auto it = names.m_entries.find(name);
    if (it == names.m_entries.end())
      fail(text, "unknown identifier '" + name + "'");
    if (const auto *v = std::get_if<value>(&it->second))
      return *v;
    if (std::find(evaluating.begin(), evaluating.end(), name) != evaluating.end()) {
      std::string chain;
      for (const auto &n : evaluating)
        chain += n + " -> ";
      fail(text, "bindings refer to each other in a cycle: " + chain + name);
    }
    evaluating.push_back(name);
    value v = std::get<expression>(it->second).eval_in(*this);
    evaluating.pop_back();
    return v;
  }
};

namespace {

const char *type_name(const value &v) {
  return is_int(v) ? "an integer" : "a string";
}

class evaluator {
public:
  evaluator(const std::string &text, eval_context &ctx) : m_text(text), m_ctx(ctx) {}

  value eval(const expr_node &n) {
    switch (n.kind) {
    case node_kind::literal:
      return n.literal;
    case node_kind::identifier:
      return m_ctx.lookup(m_text, n.name);
    case node_kind::unary:
      return unary(n);
    case node_kind::binary:
      return binary(n);
    case node_kind::conditional:
      return truth(n, *n.args[0]) ? eval(*n.args[1]) : eval(*n.args[2]);
    case node_kind::call:
      return call(n);
    }
    fail(m_text, "internal error: unknown node");
  }

private:
  std::int64_t integer(const expr_node &where, const value &v, const std::string &role) {
    if (!is_int(v))
      fail_at(m_text, where.pos, role + " must be an integer, not " + to_literal(v));
    return std::get<std::int64_t>(v);
  }

  bool truth(const expr_node &where, const expr_node &operand) {
    return integer(where, eval(operand), "a condition") != 0;
  }

  value unary(const expr_node &n) {
    const std::int64_t a = integer(n, eval(*n.args[0]), "the operand of '" + n.name + "'");
    if (n.name == "!")
      return std::int64_t{a == 0};
    if (n.name == "-") {
      if (a == std::numeric_limits<std::int64_t>::min())
        overflow(n);
      return -a;
    }
    return a;
  }

  [[noreturn]] void overflow(const expr_node &n) {
    fail_at(m_text, n.pos, "integer overflow in '" + n.name + "'");
  }

  value binary(const expr_node &n) {
    const std::string &op = n.name;
    if (op == "&&")
      return std::int64_t{truth(n, *n.args[0]) && truth(n, *n.args[1])};
    if (op == "||")
      return std::int64_t{truth(n, *n.args[0]) || truth(n, *n.args[1])};
    const value a = eval(*n.args[0]);
    const value b = eval(*n.args[1]);
    if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=")
      return compare(n, a, b);
    if (op == "+" && is_string(a) && is_string(b))
      return std::get<std::string>(a) + std::get<std::string>(b);
    if (!is_int(a) || !is_int(b))
      fail_at(m_text, n.pos,
              "'" + op + "' needs integers, not " + type_name(a) + " and " + type_name(b));
    const std::int64_t x = std::get<std::int64_t>(a), y = std::get<std::int64_t>(b);
    std::int64_t r = 0;
    if (op == "+") {
      if (__builtin_add_overflow(x, y, &r))
        overflow(n);
    } else if (op == "-") {
      if (__builtin_sub_overflow(x, y, &r))
        overflow(n);
    } else if (op == "*") {
      if (__builtin_mul_overflow(x, y, &r))
        overflow(n);
    } else {
      if (y == 0)
        fail_at(m_text, n.pos, "division by zero in '" + op + "'");
      if (x == std::numeric_limits<std::int64_t>::min() && y == -1)
        overflow(n);
      r = op == "/" ? x / y : x % y;
    }
    return r;
  }

  value compare(const expr_node &n, const value &a, const value &b) {
    if (a.index() != b.index())
      fail_at(m_text, n.pos,
              "'" + n.name + "' compares " + type_name(a) + " (" + to_literal(a) + ") with " +
                  type_name(b) + " (" + to_literal(b) + ")");
    const auto c = a <=> b;
    const std::string &op = n.name;
    bool r = false;
    if (op == "==")
      r = c == 0;
    else if (op == "!=")
      r = c != 0;
    else if (op == "<")
      r = c < 0;
    else if (op == "<=")
      r = c <= 0;
    else if (op == ">")
      r = c > 0;
    else
      r = c >= 0;
    return std::int64_t{r};
  }

  value call(const expr_node &n) {
    std::vector<std::int64_t> a;
    for (const auto &arg : n.args)
      a.push_back(integer(n, eval(*arg), n.name + "()'s argument"));
    if (n.name == "min")
      return std::min(a[0], a[1]);
    if (n.name == "max")
      return std::max(a[0], a[1]);
    if (n.name == "is_pow2")
      return std::int64_t{a[0] > 0 && (a[0] & (a[0] - 1)) == 0};
    if (n.name == "log2") {
      if (a[0] <= 0)
        fail_at(m_text, n.pos, "log2() of " + std::to_string(a[0]) + " (needs a positive value)");
      std::int64_t r = 0;
      for (std::int64_t x = a[0]; x > 1; x >>= 1)
        ++r;
      return r; // floor
    }
    // ceil_div
    if (a[1] == 0)
      fail_at(m_text, n.pos, "division by zero in ceil_div()");
    if (a[0] == std::numeric_limits<std::int64_t>::min() && a[1] == -1)
      overflow(n);
    const std::int64_t q = a[0] / a[1];
    const bool round_up = a[0] % a[1] != 0 && ((a[0] < 0) == (a[1] < 0));
    return q + (round_up ? 1 : 0);
  }

  const std::string &m_text;
  eval_context &m_ctx;
};

} // namespace
} // namespace detail

expression expression::parse(const std::string &text) {
  auto parsed = detail::parse_expression(text);
  expression e;
  e.m_text = text;
  e.m_root = std::move(parsed.root);
  e.m_identifiers = std::move(parsed.identifiers);
  return e;
}

value expression::eval_in(detail::eval_context &ctx) const {
  if (!m_root)
    throw invalid_configuration("an empty expression cannot be evaluated");
  return detail::evaluator(m_text, ctx).eval(*m_root);
}

value expression::eval(const scope &s) const {
  detail::eval_context ctx{s, {}};
  return eval_in(ctx);
}

namespace {
// The value v of the expression `text` as a T, or why it is not one.
template <typename T> T value_as(value v, const std::string &text, const char *needed) {
  if (!std::holds_alternative<T>(v))
    throw invalid_configuration("expression '" + text + "': gives " + to_literal(v) + " where " +
                                needed + " is needed");
  return std::get<T>(std::move(v));
}
} // namespace

std::int64_t expression::eval_int(const scope &s) const {
  return value_as<std::int64_t>(eval(s), m_text, "an integer");
}

std::string expression::eval_string(const scope &s) const {
  return value_as<std::string>(eval(s), m_text, "a string");
}

void scope::set(const std::string &name, value v) {
  m_entries.insert_or_assign(name, std::move(v));
}

void scope::bind(const std::string &name, expression e) {
  m_entries.insert_or_assign(name, std::move(e));
}

value scope::get(const std::string &name) const {
  detail::eval_context ctx{*this, {}};
  const auto it = m_entries.find(name);
  if (it == m_entries.end())
    throw invalid_configuration("unknown identifier '" + name + "'");
  return ctx.lookup(name, name);
}

} // namespace reducetune
