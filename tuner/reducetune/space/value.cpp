#include "reducetune/space/value.hpp"

namespace reducetune {

std::string to_string(const value &v) {
  if (const auto *i = std::get_if<std::int64_t>(&v))
    return std::to_string(*i);
  return std::get<std::string>(v);
}

std::string to_literal(const value &v) {
  if (is_int(v))
    return to_string(v);
  return "'" + std::get<std::string>(v) + "'";
}

} // namespace reducetune
