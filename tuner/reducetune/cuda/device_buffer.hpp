// Move-only owner of device memory (cudaMalloc / cudaFree).
#pragma once

#include <cstddef>

namespace reducetune {

class device_buffer {
public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes); // zero bytes: no allocation, data() == nullptr
  ~device_buffer();
  device_buffer(device_buffer &&other) noexcept;
  device_buffer &operator=(device_buffer &&other) noexcept;
  device_buffer(const device_buffer &) = delete;
  device_buffer &operator=(const device_buffer &) = delete;

  [[nodiscard]] void *data() const noexcept { return m_data; }
  [[nodiscard]] std::size_t size() const noexcept { return m_bytes; }
  template <class T> [[nodiscard]] T *as() const noexcept { return static_cast<T *>(m_data); }

  void upload(const void *host, std::size_t bytes, std::size_t offset = 0);
  void download(void *host, std::size_t bytes, std::size_t offset = 0) const;
  void zero();

private:
  void *m_data = nullptr;
  std::size_t m_bytes = 0;
};

} // namespace reducetune
