// The parser of the expression language: recursive descent into expr_node trees.
#include "reducetune/space/expression_node.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace reducetune::detail {
namespace {

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

parsed_expression parse_expression(const std::string &text) {
  parser p(text);
  auto root = p.parse_all();
  return {std::move(root), std::move(p.identifiers)};
}

} // namespace reducetune::detail
