#include "reducetune/cuda/event.hpp"

#include "reducetune/errors.hpp"

#include <utility>

namespace reducetune {

event::event() { RT_CUDA_CALL(cudaEventCreate(&m_event)); }

event::~event() {
  if (m_event) RT_CUDA_CALL_NOEXCEPT(cudaEventDestroy(m_event));
}

event::event(event &&other) noexcept : m_event(std::exchange(other.m_event, nullptr)) {}

event &event::operator=(event &&other) noexcept {
  if (this != &other) {
    event old(std::move(*this));
    m_event = std::exchange(other.m_event, nullptr);
  }
  return *this;
}

void event::record(cudaStream_t s) { RT_CUDA_CALL(cudaEventRecord(m_event, s)); }

void event::synchronize() const { RT_CUDA_CALL(cudaEventSynchronize(m_event)); }

double elapsed_seconds(const event &start, const event &stop) {
  stop.synchronize();
  float ms = 0;
  RT_CUDA_CALL(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

} // namespace reducetune
