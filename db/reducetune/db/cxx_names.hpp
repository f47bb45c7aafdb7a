// What may name the namespace of an exported C++ header (`reducetune export header
// --namespace`): decided here once, for the exporter and for the command line, which asks
// before it touches any file.
#pragma once

#include <string>
#include <string_view>

namespace reducetune::db {

// Why `ns` cannot open a namespace in a header that compiles (empty when it can): `name` or
// `outer::inner` (C++17's nested form), each part an identifier that is not a keyword and
// not reserved to the implementation (`__x`, `_X`), and not `std` at the top.
[[nodiscard]] std::string namespace_problem(std::string_view ns);

// A C++ string literal for any bytes (the exported headers print every text through it).
[[nodiscard]] std::string cxx_string_literal(std::string_view text);
// A double printed so that it reads back to the same value (%.17g).
[[nodiscard]] std::string cxx_double(double x);

} // namespace reducetune::db
