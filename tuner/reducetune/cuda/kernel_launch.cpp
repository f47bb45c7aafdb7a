#include "reducetune/cuda/kernel_launch.hpp"

#include "reducetune/cuda/driver_api.hpp"
#include "reducetune/errors.hpp"

namespace reducetune {

void launch_reduction_kernel(CUfunction kernel, unsigned grid, unsigned block, unsigned shared,
                             cudaStream_t stream, const void *in, void *out, std::uint64_t n,
                             void *partials, void *ticket) {
  unsigned long long count = n;
  void *args[] = {&in, &out, &count, &partials, &ticket};
  RT_DRIVER_CALL(driver_api::get().cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, shared,
                                                  reinterpret_cast<CUstream>(stream), args,
                                                  nullptr));
}

void allow_dynamic_shared(CUfunction kernel, unsigned bytes) {
  if (kernel != nullptr && bytes > 48 * 1024)
    RT_DRIVER_CALL(driver_api::get().cuFuncSetAttribute(
        kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)));
}

void reserve_pending_launches(std::uint64_t grid) {
  std::size_t current = 0;
  RT_CUDA_CALL(cudaDeviceGetLimit(&current, cudaLimitDevRuntimePendingLaunchCount));
  const std::size_t needed = 2 * grid + 64;
  if (current < needed)
    RT_CUDA_CALL(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, needed));
}

} // namespace reducetune
