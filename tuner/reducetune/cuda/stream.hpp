// Move-only owner of a CUDA stream (non-blocking, so the legacy default stream never
// serialises a measurement with unrelated work). cudaStream_t and CUstream are the same handle.
#pragma once

#include <cuda_runtime_api.h>

#include "reducetune/cuda/owned_handle.hpp"

namespace reducetune {

class stream {
public:
  stream();

  [[nodiscard]] cudaStream_t get() const noexcept { return m_stream.get(); }
  void synchronize() const;

private:
  static void destroy(cudaStream_t handle) noexcept;
  owned_handle<cudaStream_t, destroy> m_stream;
};

} // namespace reducetune
