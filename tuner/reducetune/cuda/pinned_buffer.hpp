// Move-only owner of page-locked host memory (cudaMallocHost / cudaFreeHost): what an
// asynchronous device-to-host copy needs to be part of a stream, and of a captured graph.
#pragma once

#include <cstddef>

namespace reducetune {

class pinned_buffer {
public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t bytes); // zero bytes: no allocation, data() == nullptr
  ~pinned_buffer();
  pinned_buffer(pinned_buffer &&other) noexcept;
  pinned_buffer &operator=(pinned_buffer &&other) noexcept;
  pinned_buffer(const pinned_buffer &) = delete;
  pinned_buffer &operator=(const pinned_buffer &) = delete;

  [[nodiscard]] void *data() const noexcept { return m_data; }
  [[nodiscard]] std::size_t size() const noexcept { return m_bytes; }

private:
  void *m_data = nullptr;
  std::size_t m_bytes = 0;
};

} // namespace reducetune
