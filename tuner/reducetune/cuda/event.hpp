// Move-only owner of a CUDA event with timing, and the elapsed time between two of them.
#pragma once

#include <cuda_runtime_api.h>

#include "reducetune/cuda/owned_handle.hpp"

namespace reducetune {

class event {
public:
  event();

  [[nodiscard]] cudaEvent_t get() const noexcept { return m_event.get(); }
  void record(cudaStream_t s);
  void synchronize() const;

private:
  static void destroy(cudaEvent_t handle) noexcept;
  owned_handle<cudaEvent_t, destroy> m_event;
};

// Seconds from start to stop; both recorded, stop synchronised by this call.
[[nodiscard]] double elapsed_seconds(const event &start, const event &stop);

} // namespace reducetune
