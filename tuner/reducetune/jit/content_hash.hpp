// A 128-bit content hash (two independent 64-bit FNV-1a lanes) for cache keys and template
// versions. Not cryptographic: it only has to tell apart the sources, options and NVRTC
// versions this project compiles, and it must be identical in every process and machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reducetune {

class content_hash {
public:
  content_hash &add(std::string_view bytes) noexcept;
  // Adds a field with its length, so that ("ab","c") and ("a","bc") hash differently.
  content_hash &field(std::string_view bytes) noexcept;
  [[nodiscard]] std::string hex() const;

private:
  std::uint64_t m_a = 0xcbf29ce484222325ull;
  std::uint64_t m_b = 0x84222325cbf29ce4ull;
};

} // namespace reducetune
