// What the standalone probes (peak_probe.cu, weave_probe.cu, launch_probe.cu,
// small_pass_probe.cu) share: the error check, two events' microseconds and a median, a
// block's float sum written to its partial, and the theoretical DRAM peak. Each probe is still
// one nvcc command: nvcc finds this header beside the file it compiles.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                                    \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// Microseconds between two recorded events, once the second has happened.
inline float elapsed_us(cudaEvent_t a, cudaEvent_t b) {
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1e3f;
}

// The median of a set of timings (the upper one of an even count).
inline float median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The block's threads' `acc` summed (warp shuffles, then one warp over the warps' sums) into
// *out by thread 0: each block's partial, written so that no load is optimised away.
template <int BS> __device__ __forceinline__ void block_sum_store(float acc, float *out) {
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ float s[BS / 32];
  if ((threadIdx.x & 31) == 0) s[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < BS / 32 ? s[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x == 0) *out = acc;
  }
}

// Device 0's theoretical DRAM peak in GB/s: 2 transfers a clock x the memory clock x the bus
// width in bytes, as the tuner computes it (tuner/reducetune/cuda/device_info.cpp,
// theoretical_peak_bytes_per_s), which a standalone probe does not link.
struct dram_peak {
  int mem_khz = 0, bus_bits = 0;
  double gbps = 0;
};
inline dram_peak theoretical_peak() {
  dram_peak p;
  CHECK(cudaDeviceGetAttribute(&p.mem_khz, cudaDevAttrMemoryClockRate, 0));
  CHECK(cudaDeviceGetAttribute(&p.bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
  p.gbps = 2.0 * p.mem_khz * 1e3 * (p.bus_bits / 8) / 1e9;
  return p;
}
