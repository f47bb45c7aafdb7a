// Bytes owned through one allocator pair: device memory (device_buffer.hpp) and page-locked host
// memory (pinned_buffer.hpp) differ only in `Memory::allocate` and `Memory::release`.
#pragma once

#include <cstddef>
#include <utility>

#include "reducetune/cuda/owned_handle.hpp"

namespace reducetune {

template <typename Memory> class owned_memory {
public:
  owned_memory() = default;
  // Zero bytes: no allocation, data() == nullptr.
  explicit owned_memory(std::size_t bytes) : m_bytes(bytes) {
    if (bytes > 0)
      Memory::allocate(m_data.out(), bytes);
  }
  owned_memory(owned_memory &&other) noexcept
      : m_data(std::move(other.m_data)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  owned_memory &operator=(owned_memory &&other) noexcept {
    m_data = std::move(other.m_data);
    m_bytes = std::exchange(other.m_bytes, 0);
    return *this;
  }

  [[nodiscard]] void *data() const noexcept { return m_data.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return m_bytes; }

private:
  owned_handle<void *, Memory::release> m_data;
  std::size_t m_bytes = 0;
};

} // namespace reducetune
