#include "reducetune/cuda/pinned_buffer.hpp"

#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

#include <utility>

namespace reducetune {

pinned_buffer::pinned_buffer(std::size_t bytes) : m_bytes(bytes) {
  if (bytes > 0) RT_CUDA_CALL(cudaMallocHost(&m_data, bytes));
}

pinned_buffer::~pinned_buffer() {
  if (m_data) RT_CUDA_CALL_NOEXCEPT(cudaFreeHost(m_data));
}

pinned_buffer::pinned_buffer(pinned_buffer &&other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {
}

pinned_buffer &pinned_buffer::operator=(pinned_buffer &&other) noexcept {
  if (this != &other) {
    pinned_buffer old(std::move(*this));
    m_data = std::exchange(other.m_data, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

} // namespace reducetune
