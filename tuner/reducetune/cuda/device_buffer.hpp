// Move-only owner of device memory (cudaMalloc / cudaFree).
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "reducetune/cuda/owned_memory.hpp"

namespace reducetune {

struct device_memory {
  static void allocate(void **out, std::size_t bytes);
  static void release(void *data) noexcept;
};

class device_buffer : public owned_memory<device_memory> {
public:
  using owned_memory::owned_memory;

  template <class T> [[nodiscard]] T *as() const noexcept { return static_cast<T *>(data()); }

  void upload(const void *host, std::size_t bytes, std::size_t offset = 0);
  void download(void *host, std::size_t bytes, std::size_t offset = 0) const;
  void zero();
  // Every byte set to `byte`, on stream s (asynchronously: the stream orders it before what
  // follows; measure/sample_copies.hpp's poison of a result).
  void fill(unsigned char byte, cudaStream_t s);
};

// Zeroes `bytes` of device memory at `p` and waits for it, on a non-blocking stream of its own:
// done before any later launch on any stream, and legal while another stream is being captured
// (relaxed mode), where the legacy stream's cudaMemset (device_buffer::zero) would end the
// capture.
void zero_device_bytes(void *p, std::size_t bytes);

} // namespace reducetune
