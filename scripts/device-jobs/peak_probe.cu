// How close can a read-only reduction get to the theoretical DRAM peak on this GPU, and do
// load cache hints change it? (issues 12 and 13: the target is 95 % of the theoretical peak
// at 2^30 float32; the tuner's best point reached 93.7-94.3 % on an H100.)
//
// A grid-stride float32 sum over 2^30 elements (4 GiB, far beyond L2, so every run is
// cold), 16-byte loads, UNROLL loads in flight per thread, partials written per block (no
// finish: the finish costs the same for every variant). Loads:
//   plain     ordinary ld.global.v4 (what the tunable family's kernel emits through
//             const __restrict__: LDG.E.128.CONSTANT)
//   nc256     ld.global.nc.L1::no_allocate.L2::256B.v4 (L2 fetches 256-byte blocks)
//   nc128     ld.global.nc.L1::no_allocate.L2::128B.v4
//   evict1st  nc256 with an L2 evict_first cache policy (createpolicy)
//   lu        ld.global.lu.v4 (last use)
//   cs        ld.global.cs.v4 (cache streaming: evict-first in L1 and L2, the coherent path;
//             CUB's LOAD_CS)
//   ef        ld.global.nc.L1::no_allocate.L2::cache_hint.v4 with an L2 evict_first policy and
//             no prefetch size (evict1st without nc256's 256-byte fetches, which cost 6 % alone)
// Issue 26 (2026-11-27): whether a read that marks its own lines evict-first in L2 keeps the
// dirty lines a predecessor left there (a memcpy, a contender writing its output) instead of
// writing them back during its own read ("dirty" below; the axis benchmark's rounds lose 4-9 us
// of about 130 after such predecessors).
// Each configuration: 3 warm-up runs, 15 timed runs between CUDA events, the median.
//
// Each load's best shape is then timed two more ways (issue 26: how much of a single call's time
// at 512 MB is the kernel's own): "gated", a spin kernel queued before the first event, so that
// neither the host's launch nor the GPU's launch latency is timed; "dirty", after a memset of
// twice the L2 (the cold flush of the tuner's protocol), so that L2 holds dirty lines that the
// kernel's reads must first write back, as after a contender that wrote its output.
//
//   nvcc -O3 -arch=sm_90 -o peak_probe scripts/device-jobs/peak_probe.cu && ./peak_probe [LOG2_BYTES]
// LOG2_BYTES: the input's size, 2^32 (2^30 float32) by default; 29 is bfloat16's 2^28 elements.
#include <algorithm>
#include <string_view>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "probe_common.cuh"


enum load_kind { plain, nc256, nc128, evict1st, lu, cs, ef };

template <int K> __device__ __forceinline__ float4 load(const float4 *p) {
  float4 v;
  if constexpr (K == plain) {
    v = *p;
  } else if constexpr (K == nc256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  } else if constexpr (K == nc128) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::128B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  } else if constexpr (K == evict1st) {
    asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
                 " ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4], pol;\n}"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  } else if constexpr (K == lu) {
    asm volatile("ld.global.lu.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  } else if constexpr (K == cs) {
    asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  } else {
    asm volatile("{\n .reg .b64 pol;\n createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
                 " ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], pol;\n}"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  }
  return v;
}

template <int K, int BS, int U>
__global__ void __launch_bounds__(BS) sum(const float4 *__restrict__ in, size_t nvec,
                                          float *partials) {
  float acc = 0.f;
  const size_t stride = size_t(gridDim.x) * BS * U;
  size_t i = size_t(blockIdx.x) * BS * U + threadIdx.x;
  for (; i + (U - 1) * BS < nvec; i += stride) {
    float4 x[U];
#pragma unroll
    for (int k = 0; k < U; ++k) x[k] = load<K>(in + i + k * BS);
#pragma unroll
    for (int k = 0; k < U; ++k) acc += (x[k].x + x[k].y) + (x[k].z + x[k].w);
  }
  for (int k = 0; k < U; ++k)
    if (i + k * BS < nvec) {
      const float4 v = load<K>(in + i + k * BS);
      acc += (v.x + v.y) + (v.z + v.w);
    }
  block_sum_store<BS>(acc, partials + blockIdx.x);
}

__global__ void spin(long long cycles) {
  const long long t = clock64();
  while (clock64() - t < cycles) {
  }
}

// How a sample begins (see the header): idle GPU, behind a spin kernel, or after a dirty L2.
enum start_kind { idle, gated, dirty };
struct flush_buffer {
  void *data = nullptr;
  size_t bytes = 0;
};
static flush_buffer g_flush;

using launcher = void (*)(const float4 *, size_t, float *, int);
template <int K, int BS, int U> void launch(const float4 *in, size_t nvec, float *p, int grid) {
  sum<K, BS, U><<<grid, BS>>>(in, nvec, p);
}

struct result {
  const char *load;
  int bs, unroll, blocks;
  double gbps;
  launcher run;
};

double median_gbps(launcher run, const float4 *in, size_t nvec, float *partials, int grid,
                   start_kind start) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) run(in, nvec, partials, grid);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 15; ++i) {
    if (start == dirty) {
      CHECK(cudaMemset(g_flush.data, i, g_flush.bytes));
      CHECK(cudaDeviceSynchronize());
    }
    if (start == gated) spin<<<1, 1>>>(200000); // about 100 us: the launch is queued behind it
    CHECK(cudaEventRecord(a));
    run(in, nvec, partials, grid);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return double(nvec) * 16 / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

template <int K, int BS, int U>
result time_one(const char *name, const float4 *in, size_t nvec, float *partials, int grid) {
  const launcher run = launch<K, BS, U>;
  return {name, BS, U, grid, median_gbps(run, in, nvec, partials, grid, idle), run};
}

template <int K, int BS, int U>
void sweep(const char *name, const float4 *in, size_t nvec, float *partials, int sms,
           std::vector<result> &out) {
  for (int per_sm : {1, 2, 4, 8, 16, 32}) {
    const int grid = per_sm * sms;
    if (size_t(grid) * BS * U <= nvec) out.push_back(time_one<K, BS, U>(name, in, nvec, partials, grid));
  }
  // uncapped: every thread one tile of U vectors
  out.push_back(time_one<K, BS, U>(name, in, nvec, partials, int(nvec / (size_t(BS) * U * 16))));
}

template <int K> void all_shapes(const char *name, const float4 *in, size_t nvec, float *p,
                                 int sms, std::vector<result> &out) {
  sweep<K, 256, 4>(name, in, nvec, p, sms, out);
  sweep<K, 256, 8>(name, in, nvec, p, sms, out);
  sweep<K, 512, 4>(name, in, nvec, p, sms, out);
  sweep<K, 512, 8>(name, in, nvec, p, sms, out);
  sweep<K, 1024, 2>(name, in, nvec, p, sms, out);
  sweep<K, 1024, 4>(name, in, nvec, p, sms, out);
}

int main(int argc, char **argv) {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const dram_peak dram = theoretical_peak();
  const double peak = dram.gbps;
  const int log2_bytes = argc > 1 ? std::atoi(argv[1]) : 32;
  const size_t n = (size_t(1) << log2_bytes) / 4, nvec = n / 4;
  g_flush.bytes = 2 * size_t(prop.l2CacheSize);
  CHECK(cudaMalloc(&g_flush.data, g_flush.bytes));
  float4 *in = nullptr;
  float *partials = nullptr;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMalloc(&partials, 1 << 24));
  CHECK(cudaMemset(in, 0, n * 4));
  std::printf("# %s, %d SMs, memory clock %d kHz, bus %d bits: theoretical peak %.0f GB/s; "
              "input %zu bytes\n",
              prop.name, prop.multiProcessorCount, dram.mem_khz, dram.bus_bits, peak, n * 4);
  std::vector<result> r;
  const int sms = prop.multiProcessorCount;
  all_shapes<plain>("plain", in, nvec, partials, sms, r);
  all_shapes<nc256>("nc256", in, nvec, partials, sms, r);
  all_shapes<nc128>("nc128", in, nvec, partials, sms, r);
  all_shapes<evict1st>("evict1st", in, nvec, partials, sms, r);
  all_shapes<lu>("lu", in, nvec, partials, sms, r);
  all_shapes<cs>("cs", in, nvec, partials, sms, r);
  all_shapes<ef>("ef", in, nvec, partials, sms, r);
  std::printf("load      bs  unroll  blocks   GB/s   %%peak\n");
  for (const auto &x : r)
    std::printf("%-8s %4d %6d %7d %7.0f %6.1f\n", x.load, x.bs, x.unroll, x.blocks, x.gbps,
                100 * x.gbps / peak);
  for (const char *k : {"plain", "nc256", "nc128", "evict1st", "lu", "cs", "ef"}) {
    const result *best = nullptr;
    for (const auto &x : r)
      if (std::string_view(x.load) == k && (!best || x.gbps > best->gbps)) best = &x;
    std::printf("best %-8s bs %4d unroll %d blocks %6d: %.0f GB/s, %.1f %% of peak\n", k,
                best->bs, best->unroll, best->blocks, best->gbps, 100 * best->gbps / peak);
    const double g = median_gbps(best->run, in, nvec, partials, best->blocks, gated);
    const double d = median_gbps(best->run, in, nvec, partials, best->blocks, dirty);
    std::printf("     gated (no launch timed) %.0f GB/s, %.1f %%; after a dirty L2 %.0f GB/s, "
                "%.1f %%\n", g, 100 * g / peak, d, 100 * d / peak);
  }
  return 0;
}
