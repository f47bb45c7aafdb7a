#include "reducetune/space/expression.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

namespace reducetune {
namespace detail {

enum class node_kind { literal, identifier, unary, binary, conditional, call };

struct expr_node {
  node_kind kind;
  std::size_t pos = 0; // where it starts in the text, for messages
  value literal;       // literal
  std::string name;    // identifier, operator or function name
  std::vector<std::unique_ptr<expr_node>> args;
};

namespace {

[[noreturn]] void fail(const std::string &text, const std::string &what) {
  throw invalid_configuration("expression '" + text + "': " + what);
}

[[noreturn]] void fail_at(const std::string &text, std::size_t pos, const std::string &what) {
  fail(text, "at position " + std::to_string(pos) + ": " + what);
}

struct function_info {
  const char *name;
  std::size_t arity;
};
constexpr function_info functions[] = {
    {"min", 2}, {"max", 2}, {"ceil_div", 2}, {"log2", 1}, {"is_pow2", 1}};

// Recursive descent over the text; precedence as in C, lowest first:
// ?:  ||  &&  == !=  < <= > >=  + -  * / %  unary ! - +  primary.
class parser {
public:
  explicit parser(const std::string &text) : m_text(text) {}

  std::unique_ptr<expr_node> parse_all() {
    auto root = conditional();
    skip_space();
    if (m_pos != m_text.size())
      fail_at(m_text, m_pos, "unexpected '" + m_text.substr(m_pos, 1) + "'");
    return root;
  }

  std::set<std::string> identifiers;

private:
  using node_ptr = std::unique_ptr<expr_node>;

  void skip_space() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
      ++m_pos;
  }

  bool accept(const char *op) {
    skip_space();
    const std::string_view o{op};
    if (m_text.compare(m_pos, o.size(), o) != 0)
      return false;
    // '<' must not swallow the first half of '<=', '!' of '!=', '=' alone is never valid.
    if (o.size() == 1 && m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '=' &&
        (o == "<" || o == ">" || o == "!"))
      return false;
    m_pos += o.size();
    return true;
  }

  void expect(const char *op) {
    if (!accept(op)) {
      skip_space();
      fail_at(m_text, m_pos,
              std::string("expected '") + op + "' but found " +
                  (m_pos < m_text.size() ? "'" + m_text.substr(m_pos, 1) + "'" : "the end"));
    }
  }

  static node_ptr make(node_kind k, std::size_t pos, std::string name = {}) {
    auto n = std::make_unique<expr_node>();
    n->kind = k;
    n->pos = pos;
    n->name = std::move(name);
    return n;
  }

  node_ptr binary(std::string op, std::size_t pos, node_ptr a, node_ptr b) {
    auto n = make(node_kind::binary, pos, std::move(op));
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    return n;
  }

  node_ptr conditional() {
    skip_space();
    const std::size_t pos = m_pos;
    auto cond = logical_or();
    if (!accept("?"))
      return cond;
    auto a = conditional();
    expect(":");
    auto b = conditional();
    auto n = make(node_kind::conditional, pos);
    n->args.push_back(std::move(cond));
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    return n;
  }

  // One left-associative level: operand (op operand)*.
  template <typename Next> node_ptr level(std::initializer_list<const char *> ops, Next next) {
    skip_space();
    const std::size_t pos = m_pos;
    auto lhs = (this->*next)();
    for (;;) {
      const char *matched = nullptr;
      for (const char *op : ops)
        if (accept(op)) {
          matched = op;
          break;
        }
      if (!matched)
        return lhs;
      lhs = binary(matched, pos, std::move(lhs), (this->*next)());
    }
  }

  node_ptr logical_or() { return level({"||"}, &parser::logical_and); }
  node_ptr logical_and() { return level({"&&"}, &parser::equality); }
  node_ptr equality() { return level({"==", "!="}, &parser::relational); }
  node_ptr relational() { return level({"<=", ">=", "<", ">"}, &parser::additive); }
  node_ptr additive() { return level({"+", "-"}, &parser::multiplicative); }
  node_ptr multiplicative() { return level({"*", "/", "%"}, &parser::unary); }

  node_ptr unary() {
    skip_space();
    const std::size_t pos = m_pos;
    for (const char *op : {"!", "-", "+"})
      if (accept(op)) {
        auto n = make(node_kind::unary, pos, op);
        n->args.push_back(unary());
        return n;
      }
    return primary();
  }

  node_ptr primary() {
    skip_space();
    const std::size_t pos = m_pos;
    if (m_pos >= m_text.size())
      fail_at(m_text, m_pos, "unexpected end of expression");
    const char c = m_text[m_pos];
    if (c == '(') {
      ++m_pos;
      auto inner = conditional();
      expect(")");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)))
      return number(pos);
    if (c == '\'')
      return string_literal(pos);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
      return identifier_or_call(pos);
    fail_at(m_text, pos, "unexpected '" + std::string(1, c) + "'");
  }

  node_ptr number(std::size_t pos) {
    std::int64_t v = 0;
    while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
      const int d = m_text[m_pos] - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10)
        fail_at(m_text, pos, "integer literal does not fit in 64 bits");
      v = v * 10 + d;
      ++m_pos;
    }
    if (m_pos < m_text.size() &&
        (std::isalpha(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
      fail_at(m_text, m_pos, "a number is followed by '" + m_text.substr(m_pos, 1) + "'");
    auto n = make(node_kind::literal, pos);
    n->literal = v;
    return n;
  }

  node_ptr string_literal(std::size_t pos) {
    const std::size_t end = m_text.find('\'', pos + 1);
    if (end == std::string::npos)
      fail_at(m_text, pos, "unterminated string literal");
    auto n = make(node_kind::literal, pos);
    n->literal = m_text.substr(pos + 1, end - pos - 1);
    m_pos = end + 1;
    return n;
  }

  node_ptr identifier_or_call(std::size_t pos) {
    while (m_pos < m_text.size() &&
           (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
      ++m_pos;
    std::string name = m_text.substr(pos, m_pos - pos);
    skip_space();
    if (m_pos >= m_text.size() || m_text[m_pos] != '(') {
      identifiers.insert(name);
      return make(node_kind::identifier, pos, std::move(name));
    }
    const auto *fn = std::find_if(std::begin(functions), std::end(functions),
                                  [&](const function_info &f) { return name == f.name; });
    if (fn == std::end(functions))
      fail_at(m_text, pos,
              "unknown function '" + name + "' (known: min, max, ceil_div, log2, is_pow2)");
    ++m_pos; // '('
    auto n = make(node_kind::call, pos, std::move(name));
    if (!accept(")")) {
      do
        n->args.push_back(conditional());
      while (accept(","));
      expect(")");
    }
    if (n->args.size() != fn->arity)
      fail_at(m_text, pos,
              n->name + "() takes " + std::to_string(fn->arity) + " argument" +
                  (fn->arity == 1 ? "" : "s") + ", given " + std::to_string(n->args.size()));
    return n;
  }

  const std::string &m_text;
  std::size_t m_pos = 0;
};

} // namespace

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
  detail::parser p(text);
  expression e;
  e.m_text = text;
  e.m_root = p.parse_all();
  e.m_identifiers = std::move(p.identifiers);
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

std::int64_t expression::eval_int(const scope &s) const {
  const value v = eval(s);
  if (!is_int(v))
    throw invalid_configuration("expression '" + m_text + "': gives " + to_literal(v) +
                                " where an integer is needed");
  return std::get<std::int64_t>(v);
}

std::string expression::eval_string(const scope &s) const {
  const value v = eval(s);
  if (!is_string(v))
    throw invalid_configuration("expression '" + m_text + "': gives " + to_literal(v) +
                                " where a string is needed");
  return std::get<std::string>(v);
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
