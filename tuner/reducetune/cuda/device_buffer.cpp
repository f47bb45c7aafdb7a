#include "reducetune/cuda/device_buffer.hpp"

#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

#include <utility>

namespace reducetune {

device_buffer::device_buffer(std::size_t bytes) : m_bytes(bytes) {
  if (bytes > 0) RT_CUDA_CALL(cudaMalloc(&m_data, bytes));
}

device_buffer::~device_buffer() {
  if (m_data) RT_CUDA_CALL_NOEXCEPT(cudaFree(m_data));
}

device_buffer::device_buffer(device_buffer &&other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

device_buffer &device_buffer::operator=(device_buffer &&other) noexcept {
  if (this != &other) {
    device_buffer old(std::move(*this));
    m_data = std::exchange(other.m_data, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

void device_buffer::upload(const void *host, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > m_bytes) throw invalid_configuration("upload past the end of a buffer");
  RT_CUDA_CALL(cudaMemcpy(static_cast<char *>(m_data) + offset, host, bytes,
                          cudaMemcpyHostToDevice));
}

void device_buffer::download(void *host, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > m_bytes) throw invalid_configuration("download past the end of a buffer");
  RT_CUDA_CALL(cudaMemcpy(host, static_cast<const char *>(m_data) + offset, bytes,
                          cudaMemcpyDeviceToHost));
}

void device_buffer::zero() {
  if (m_data) RT_CUDA_CALL(cudaMemset(m_data, 0, m_bytes));
}

} // namespace reducetune
