// One table per enumeration that has names: the name of a value and the value of a name are read
// from the same rows, so the two directions cannot disagree and an added value needs one row.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace reducetune {

template <typename E> struct named {
  E value;
  const char *name; // a string literal, so that to_string can return it as a C string
};

template <typename E, std::size_t N> using name_table = std::array<named<E>, N>;

// The name of `value`, or `fallback` for a value outside the table (a cast integer).
template <typename E, std::size_t N>
constexpr const char *name_of(const name_table<E, N> &table, E value,
                              const char *fallback = "?") noexcept {
  for (const auto &row : table)
    if (row.value == value)
      return row.name;
  return fallback;
}

template <typename E, std::size_t N>
constexpr std::optional<E> value_named(const name_table<E, N> &table,
                                       std::string_view name) noexcept {
  for (const auto &row : table)
    if (name == row.name)
      return row.value;
  return std::nullopt;
}

// "a, b, c": the valid names, for an error message.
template <typename E, std::size_t N> std::string names_of(const name_table<E, N> &table) {
  std::string out;
  for (const auto &row : table)
    out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

} // namespace reducetune
