#include "reducetune/cuda/stream_gate.hpp"

#include "reducetune/errors.hpp"

#include <atomic>

namespace reducetune {
namespace {

// About one second at Hopper's clocks: far longer than any host needs to enqueue a sample,
// short enough that a forgotten release costs little.
constexpr long long timeout_cycles = 2'000'000'000LL;

__global__ void spin_until_released(volatile int *flags) {
  const long long start = clock64();
  while (flags[0] == 0) {
    if (clock64() - start > timeout_cycles) {
      flags[1] = 1;
      __threadfence_system();
      return;
    }
  }
}

} // namespace

stream_gate::stream_gate() {
  void *p = nullptr;
  RT_CUDA_CALL(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  m_flags = static_cast<volatile int *>(p);
  m_flags[0] = 1;
  m_flags[1] = 0;
}

stream_gate::~stream_gate() {
  m_flags[0] = 1; // never leave a spinning kernel behind
  RT_CUDA_CALL_NOEXCEPT(cudaFreeHost(const_cast<int *>(m_flags)));
}

void stream_gate::block(cudaStream_t s) {
  m_flags[0] = 0;
  m_flags[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  int *device_flags = nullptr;
  RT_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void **>(&device_flags),
                                        const_cast<int *>(m_flags), 0));
  spin_until_released<<<1, 1, 0, s>>>(device_flags);
  RT_CUDA_CALL(cudaGetLastError());
}

void stream_gate::release() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  m_flags[0] = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool stream_gate::timed_out() const noexcept { return m_flags[1] != 0; }

} // namespace reducetune
