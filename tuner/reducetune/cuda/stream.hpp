// Move-only owner of a CUDA stream (non-blocking, so the legacy default stream never
// serialises a measurement with unrelated work). cudaStream_t and CUstream are the same handle.
#pragma once

#include <cuda_runtime_api.h>

namespace reducetune {

class stream {
public:
  stream();
  ~stream();
  stream(stream &&other) noexcept;
  stream &operator=(stream &&other) noexcept;
  stream(const stream &) = delete;
  stream &operator=(const stream &) = delete;

  [[nodiscard]] cudaStream_t get() const noexcept { return m_stream; }
  void synchronize() const;

private:
  cudaStream_t m_stream = nullptr;
};

} // namespace reducetune
