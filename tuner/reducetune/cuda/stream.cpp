#include "reducetune/cuda/stream.hpp"

#include "reducetune/errors.hpp"

#include <utility>

namespace reducetune {

stream::stream() { RT_CUDA_CALL(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }

stream::~stream() {
  if (m_stream) RT_CUDA_CALL_NOEXCEPT(cudaStreamDestroy(m_stream));
}

stream::stream(stream &&other) noexcept : m_stream(std::exchange(other.m_stream, nullptr)) {}

stream &stream::operator=(stream &&other) noexcept {
  if (this != &other) {
    stream old(std::move(*this));
    m_stream = std::exchange(other.m_stream, nullptr);
  }
  return *this;
}

void stream::synchronize() const { RT_CUDA_CALL(cudaStreamSynchronize(m_stream)); }

} // namespace reducetune
