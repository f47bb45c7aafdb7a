#include "reducetune/cuda/event.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

event::event() { RT_CUDA_CALL(cudaEventCreate(m_event.out())); }

void event::destroy(cudaEvent_t handle) noexcept {
  RT_CUDA_CALL_NOEXCEPT(cudaEventDestroy(handle));
}

void event::record(cudaStream_t s) { RT_CUDA_CALL(cudaEventRecord(m_event.get(), s)); }

void event::synchronize() const { RT_CUDA_CALL(cudaEventSynchronize(m_event.get())); }

double elapsed_seconds(const event &start, const event &stop) {
  stop.synchronize();
  float ms = 0;
  RT_CUDA_CALL(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

} // namespace reducetune
