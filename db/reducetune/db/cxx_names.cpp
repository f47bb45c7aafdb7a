#include "reducetune/db/cxx_names.hpp"

#include <cstdio>

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

// A C++ string literal for any bytes: only printable ASCII passes through; everything else,
// quotes and backslashes included, is escaped (octal, so no following digit can extend it).
std::string cxx_string_literal(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

std::string cxx_double(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

} // namespace reducetune::db
