// Move-only owner of a CUDA event with timing, and the elapsed time between two of them.
#pragma once

#include <cuda_runtime_api.h>

namespace reducetune {

class event {
public:
  event();
  ~event();
  event(event &&other) noexcept;
  event &operator=(event &&other) noexcept;
  event(const event &) = delete;
  event &operator=(const event &) = delete;

  [[nodiscard]] cudaEvent_t get() const noexcept { return m_event; }
  void record(cudaStream_t s);
  void synchronize() const;

private:
  cudaEvent_t m_event = nullptr;
};

// Seconds from start to stop; both recorded, stop synchronised by this call.
[[nodiscard]] double elapsed_seconds(const event &start, const event &stop);

} // namespace reducetune
