#include "reducetune/cuda/pinned_buffer.hpp"

#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

namespace reducetune {

void pinned_memory::allocate(void **out, std::size_t bytes) {
  RT_CUDA_CALL(cudaMallocHost(out, bytes));
}

void pinned_memory::release(void *data) noexcept { RT_CUDA_CALL_NOEXCEPT(cudaFreeHost(data)); }

} // namespace reducetune
