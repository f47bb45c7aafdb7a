#include "reducetune/cuda/stream.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

stream::stream() {
  RT_CUDA_CALL(cudaStreamCreateWithFlags(m_stream.out(), cudaStreamNonBlocking));
}

void stream::destroy(cudaStream_t handle) noexcept {
  RT_CUDA_CALL_NOEXCEPT(cudaStreamDestroy(handle));
}

void stream::synchronize() const { RT_CUDA_CALL(cudaStreamSynchronize(m_stream.get())); }

} // namespace reducetune
