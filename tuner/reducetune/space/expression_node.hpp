// The parsed form of an expression (expression.hpp), shared by the parser
// (expression_parser.cpp) and the evaluator (expression.cpp); nothing outside them uses it.
#pragma once

#include "reducetune/errors.hpp"
#include "reducetune/space/value.hpp"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace reducetune::detail {

enum class node_kind { literal, identifier, unary, binary, conditional, call };

struct expr_node {
  node_kind kind;
  std::size_t pos = 0; // where it starts in the text, for messages
  value literal;       // literal
  std::string name;    // identifier, operator or function name
  std::vector<std::unique_ptr<expr_node>> args;
};

struct parsed_expression {
  std::unique_ptr<expr_node> root;
  std::set<std::string> identifiers; // every identifier the text mentions
};

// Throws invalid_configuration naming the text and the position of the first error.
[[nodiscard]] parsed_expression parse_expression(const std::string &text);

[[noreturn]] inline void fail(const std::string &text, const std::string &what) {
  throw invalid_configuration("expression '" + text + "': " + what);
}

[[noreturn]] inline void fail_at(const std::string &text, std::size_t pos,
                                 const std::string &what) {
  fail(text, "at position " + std::to_string(pos) + ": " + what);
}

} // namespace reducetune::detail
