#include "reducetune/cuda/stream_gate.hpp"

#include "reducetune/errors.hpp"

#include <atomic>

namespace reducetune {
namespace {

// About one second at Hopper's clocks: far longer than any host needs to enqueue a sample,
// short enough that a forgotten release costs little.
constexpr long long timeout_cycles = 2'000'000'000LL;

__global__ void spin_until_released(volatile int *flag) {
  const long long start = clock64();
  while (*flag == 0)
    if (clock64() - start > timeout_cycles) return;
}

} // namespace

stream_gate::stream_gate() {
  void *p = nullptr;
  RT_CUDA_CALL(cudaHostAlloc(&p, sizeof(int), cudaHostAllocMapped));
  m_flag = static_cast<volatile int *>(p);
  *m_flag = 1;
  RT_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void **>(&m_device_flag), p, 0));
}

stream_gate::~stream_gate() {
  *m_flag = 1; // never leave a spinning kernel behind
  RT_CUDA_CALL_NOEXCEPT(cudaFreeHost(const_cast<int *>(m_flag)));
}

void stream_gate::block(cudaStream_t s) {
  *m_flag = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  spin_until_released<<<1, 1, 0, s>>>(m_device_flag);
  RT_CUDA_CALL(cudaGetLastError());
}

void stream_gate::release() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *m_flag = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

} // namespace reducetune
