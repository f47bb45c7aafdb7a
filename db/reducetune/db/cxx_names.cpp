#include "reducetune/db/cxx_names.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace reducetune::db {
namespace {

// C++20's keywords and alternative tokens ([lex.key], [lex.digraph]).
constexpr std::string_view keywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
};

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string part_problem(std::string_view part) {
  if (part.empty())
    return "is empty (a leading, trailing or doubled ::)";
  if (!is_identifier(part))
    return "is not an identifier (letters, digits, _; not starting with a digit)";
  if (std::find(std::begin(keywords), std::end(keywords), part) != std::end(keywords))
    return "is a C++ keyword";
  if (part.find("__") != std::string_view::npos ||
      (part.size() > 1 && part[0] == '_' && std::isupper(static_cast<unsigned char>(part[1]))))
    return "is reserved to the compiler (__ or _ and a capital)";
  return "";
}

} // namespace

std::string namespace_problem(std::string_view ns) {
  const std::string quoted = "'" + std::string(ns.substr(0, 60)) + "'";
  for (std::size_t start = 0;;) {
    const std::size_t end = ns.find("::", start);
    const std::string_view part = ns.substr(start, end == std::string_view::npos ? ns.npos
                                                                                  : end - start);
    if (const std::string why = part_problem(part); !why.empty())
      return quoted + " is not a C++ namespace: '" + std::string(part.substr(0, 60)) + "' " + why;
    if (start == 0 && part == "std")
      return quoted + ": a program may not add to namespace std; name your own";
    if (end == std::string_view::npos)
      return "";
    start = end + 2;
  }
}

} // namespace reducetune::db
