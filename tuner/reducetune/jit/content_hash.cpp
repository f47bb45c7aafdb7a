#include "reducetune/jit/content_hash.hpp"

#include <cstdio>

namespace reducetune {

content_hash &content_hash::add(std::string_view bytes) noexcept {
  constexpr std::uint64_t prime_a = 0x100000001b3ull;
  constexpr std::uint64_t prime_b = 0x00000100000001b3ull ^ 0x9e3779b97f4a7c15ull;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    m_a = (m_a ^ byte) * prime_a;
    m_b = (m_b ^ byte) * (prime_b | 1ull);
  }
  return *this;
}

content_hash &content_hash::field(std::string_view bytes) noexcept {
  const std::string length = std::to_string(bytes.size()) + ":";
  return add(length).add(bytes);
}

std::string content_hash::hex() const {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(m_a),
                static_cast<unsigned long long>(m_b));
  return text;
}

} // namespace reducetune
