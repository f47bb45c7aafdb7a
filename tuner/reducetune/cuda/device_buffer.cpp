#include "reducetune/cuda/device_buffer.hpp"

#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

namespace reducetune {

void device_memory::allocate(void **out, std::size_t bytes) {
  RT_CUDA_CALL(cudaMalloc(out, bytes));
}

void device_memory::release(void *data) noexcept { RT_CUDA_CALL_NOEXCEPT(cudaFree(data)); }

void device_buffer::upload(const void *host, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > size()) throw invalid_configuration("upload past the end of a buffer");
  RT_CUDA_CALL(cudaMemcpy(static_cast<char *>(data()) + offset, host, bytes,
                          cudaMemcpyHostToDevice));
}

void device_buffer::download(void *host, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > size()) throw invalid_configuration("download past the end of a buffer");
  RT_CUDA_CALL(cudaMemcpy(host, static_cast<const char *>(data()) + offset, bytes,
                          cudaMemcpyDeviceToHost));
}

void device_buffer::zero() {
  if (data()) RT_CUDA_CALL(cudaMemset(data(), 0, size()));
}

void device_buffer::fill(unsigned char byte, cudaStream_t s) {
  if (data()) RT_CUDA_CALL(cudaMemsetAsync(data(), byte, size(), s));
}

void zero_device_bytes(void *p, std::size_t bytes) {
  if (bytes == 0) return;
  const stream s;
  RT_CUDA_CALL(cudaMemsetAsync(p, 0, bytes, s.get()));
  s.synchronize();
}

} // namespace reducetune
