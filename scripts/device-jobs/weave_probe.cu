// Does the order in which a split's blocks walk the input change the read rate? (issue 26: the
// split column points read 512 MB at 89-90 % of the DRAM peak in Nsight Compute where a block
// per row reads 94 %, docs/results/h200x4_2026-11-27_axis_cxx_timed_pdl/h200x2_probes.)
//
// The same bytes (a contiguous buffer of 16-byte vectors), summed three ways:
//   stream   the streaming kernel's grid stride: at any moment the grid reads one window of
//            grid * BS * U vectors, the whole buffer in order
//   chunked  a split as the axis kernels divide r today: P parts, part p reads the contiguous
//            chunk [p * n / P, (p + 1) * n / P) alone, so P streams run at once, n / P apart
//   woven    the same P parts, interleaved: part p reads the groups of BS * U vectors
//            j * P + p, j = 0, 1, ..., so all parts advance through one window together
// Each part's sum is written to partials[p] (a split's partials). Each configuration: 3
// warm-up runs, 15 timed runs between CUDA events (GPU idle before each, its launch timed, as
// the axis benchmark times an application's call), the median; then the best of each kind
// after a memset of twice the L2 (dirty lines, as after a contender that wrote).
//
//   nvcc -O3 -arch=sm_90 -o weave_probe scripts/device-jobs/weave_probe.cu && ./weave_probe [LOG2_BYTES]
// LOG2_BYTES: 29 (512 MB: bfloat16 2^28 elements) by default.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <cuda_runtime.h>

#include "probe_common.cuh"

enum walk { stream, chunked, woven };

template <int U> __device__ __forceinline__ float add(const float4 (&x)[U]) {
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < U; ++k) acc += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  return acc;
}

// parts: P for chunked and woven (one block per part, the grid is P); stream ignores it.
template <int W, int BS, int U>
__global__ void __launch_bounds__(BS) sum(const float4 *__restrict__ in, size_t n, size_t parts,
                                          float *partials) {
  constexpr size_t G = size_t(BS) * U; // vectors a block reads per step
  float acc = 0.f;
  float4 x[U];
  if constexpr (W == stream) {
    for (size_t g = blockIdx.x; (g + 1) * G <= n; g += gridDim.x) {
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = __ldg(in + g * G + threadIdx.x + k * BS);
      acc += add<U>(x);
    }
  } else if constexpr (W == chunked) {
    const size_t chunk = (n + parts - 1) / parts, base = blockIdx.x * chunk;
    const size_t cnt = base < n ? (n < base + chunk ? n : base + chunk) - base : 0;
    size_t i = 0;
    for (; i + G <= cnt; i += G) {
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = __ldg(in + base + i + threadIdx.x + k * BS);
      acc += add<U>(x);
    }
    for (i += threadIdx.x; i < cnt; i += BS) { // the chunk's tail: every byte is read
      const float4 v = __ldg(in + base + i);
      acc += (v.x + v.y) + (v.z + v.w);
    }
  } else {
    for (size_t g = blockIdx.x; (g + 1) * G <= n; g += parts) {
#pragma unroll
      for (int k = 0; k < U; ++k) x[k] = __ldg(in + g * G + threadIdx.x + k * BS);
      acc += add<U>(x);
    }
  }
  // (n is a power of two, a multiple of every G here: stream and woven read every byte)
  block_sum_store<BS>(acc, partials + blockIdx.x);
}

static void *g_flush = nullptr;
static size_t g_flush_bytes = 0;

using launcher = void (*)(const float4 *, size_t, size_t, float *);
template <int W, int BS, int U> void launch(const float4 *in, size_t n, size_t parts, float *p) {
  sum<W, BS, U><<<unsigned(parts), BS>>>(in, n, parts, p);
}

double median_gbps(launcher run, const float4 *in, size_t n, size_t parts, float *p, bool dirty) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) run(in, n, parts, p);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 15; ++i) {
    if (dirty) CHECK(cudaMemset(g_flush, i, g_flush_bytes));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(a));
    run(in, n, parts, p);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return double(n) * 16 / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

struct result {
  const char *walk;
  int bs, unroll;
  size_t parts;
  double gbps;
  launcher run;
};

template <int BS, int U>
void shapes(const float4 *in, size_t n, float *p, int sms, std::vector<result> &out) {
  for (int per_sm : {2, 4, 6, 8, 16})
    out.push_back({"stream", BS, U, size_t(per_sm) * sms, 0, launch<stream, BS, U>});
  for (size_t parts : {size_t(256), size_t(512), size_t(1024), size_t(2048), size_t(4096),
                       size_t(4) * sms, size_t(6) * sms, size_t(8) * sms}) {
    out.push_back({"chunked", BS, U, parts, 0, launch<chunked, BS, U>});
    out.push_back({"woven", BS, U, parts, 0, launch<woven, BS, U>});
  }
}

int main(int argc, char **argv) {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const dram_peak dram = theoretical_peak();
  const double peak = dram.gbps;
  const int log2_bytes = argc > 1 ? std::atoi(argv[1]) : 29;
  const size_t n = (size_t(1) << log2_bytes) / 16;
  g_flush_bytes = 2 * size_t(prop.l2CacheSize);
  CHECK(cudaMalloc(&g_flush, g_flush_bytes));
  float4 *in = nullptr;
  float *partials = nullptr;
  CHECK(cudaMalloc(&in, n * 16));
  CHECK(cudaMalloc(&partials, 1 << 20));
  CHECK(cudaMemset(in, 0, n * 16));
  std::printf("# %s, %d SMs, theoretical peak %.0f GB/s; input %zu bytes\n", prop.name,
              prop.multiProcessorCount, peak, n * 16);
  const int sms = prop.multiProcessorCount;
  std::vector<result> r;
  shapes<256, 4>(in, n, partials, sms, r);
  shapes<256, 8>(in, n, partials, sms, r);
  shapes<512, 4>(in, n, partials, sms, r);
  for (auto &x : r) x.gbps = median_gbps(x.run, in, n, x.parts, partials, false);
  std::printf("walk       bs  unroll  blocks   GB/s   %%peak\n");
  for (const auto &x : r)
    std::printf("%-8s %4d %6d %7zu %7.0f %6.1f\n", x.walk, x.bs, x.unroll, x.parts, x.gbps,
                100 * x.gbps / peak);
  for (const char *w : {"stream", "chunked", "woven"}) {
    const result *best = nullptr;
    for (const auto &x : r)
      if (std::string_view(x.walk) == w && (!best || x.gbps > best->gbps)) best = &x;
    const double d = median_gbps(best->run, in, n, best->parts, partials, true);
    std::printf("best %-8s bs %4d unroll %d blocks %5zu: %.0f GB/s, %.1f %% of peak; after a "
                "dirty L2 %.0f GB/s, %.1f %%\n", w, best->bs, best->unroll, best->parts,
                best->gbps, 100 * best->gbps / peak, d, 100 * d / peak);
  }
  return 0;
}
