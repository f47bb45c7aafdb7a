#include "reducetune/cuda/l2_flush.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

l2_flush::l2_flush(std::uint64_t l2_bytes) : m_buffer(2 * l2_bytes) {}

void l2_flush::enqueue(cudaStream_t s) {
  if (m_buffer.size() > 0) RT_CUDA_CALL(cudaMemsetAsync(m_buffer.data(), 0, m_buffer.size(), s));
}

} // namespace reducetune
