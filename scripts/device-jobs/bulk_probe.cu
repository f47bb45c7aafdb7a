// Do Hopper's bulk copies (TMA: cp.async.bulk into shared memory, completed on an mbarrier)
// read a split's chunks faster than plain loads? (issue 26: the split column shapes read 512 MB
// at 0.96-0.98 x the streaming kernel with their finish cut out, and neither the waves, the load
// width, the early trigger nor a woven walk closed it: docs/results/
// h200x2_2026-11-27_ticket_bound_and_wave_probe.)
//
// The same 512 MB (float32 ones, so every variant's sum is known exactly), summed per block into
// a partial, as a split's pass does, in these ways:
//   gs BSxU xW     the streaming kernel's grid stride, BS threads, U 16-byte loads in flight, a
//                  grid of W waves of resident blocks (the ceiling's shape: 1024 x 4 x 4 waves)
//   chunk P BSxU   P blocks, block p reading the contiguous chunk p of n / P (a split's part),
//                  plain 16-byte loads, U in flight
//   bulk P SxKB    P blocks of 256, each streaming its chunk through S stages of K KB of shared
//                  memory: one thread issues each stage's cp.async.bulk, completed on the
//                  stage's mbarrier; all threads sum the stage, then it is refilled
//   chunk P bf16 xE BSxU   the chunk read as bfloat16, E a load (4-16 bytes), E float
//                  accumulators a thread, as a column tile of lanes x E columns does
// Each is timed as the axis benchmark times an application's call (the GPU idle before it, its
// launch between the two CUDA events), in 40 rounds of a rotated order; the median. The sum of
// the partials is checked against the count of ones.
//
//   nvcc -O3 -arch=sm_90 -o bulk_probe scripts/device-jobs/bulk_probe.cu && ./bulk_probe
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "probe_common.cuh"

// The plain reads: Chunk false, the grid stride (thread i reads i, i + grid x BS, ...); true, the
// block's contiguous chunk (thread t reads first + t, first + t + BS, ...: a constant step, so
// the U loads take immediate offsets).
template <int BS, int U, bool Chunk>
__global__ void __launch_bounds__(BS) plain(const float4 *__restrict__ in, size_t n,
                                            float *partials) {
  const size_t chunk = (n + gridDim.x - 1) / gridDim.x;
  const size_t first = Chunk ? min(n, blockIdx.x * chunk) : size_t(blockIdx.x) * BS;
  const size_t end = Chunk ? min(n, first + chunk) : n;
  const size_t step = Chunk ? size_t(BS) : size_t(gridDim.x) * BS;
  float acc = 0.f;
  size_t i = first + threadIdx.x;
  for (; i + (U - 1) * step < end; i += U * step) {
    float4 x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = __ldg(in + i + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
  }
  for (; i < end; i += step) {
    const float4 v = __ldg(in + i);
    acc += (v.x + v.y) + (v.z + v.w);
  }
  block_sum_store<BS>(acc, partials + blockIdx.x);
}

// chunked, read as bfloat16 as an axis column tile does: loads of E bfloat16 (2 E bytes), each
// converted to float and added to its own accumulator (a lane's E columns), U loads in flight.
// The float ones read as bfloat16 are pairs (0, 1): the sum is still the count of floats.
template <int E> struct words;
template <> struct words<2> { using type = unsigned; };
template <> struct words<4> { using type = uint2; };
template <> struct words<8> { using type = uint4; };

template <int E> __device__ __forceinline__ void add_bf16(float (&acc)[E], typename words<E>::type w) {
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&w);
#pragma unroll
  for (int e = 0; e < E / 2; ++e) {
    const float2 f = __bfloat1622float2(h[e]);
    acc[2 * e] += f.x;
    acc[2 * e + 1] += f.y;
  }
}

template <int BS, int U, int E>
__global__ void __launch_bounds__(BS) chunked_bf16(const float4 *__restrict__ in16, size_t n16,
                                                   float *partials) {
  using W = typename words<E>::type;
  const W *in = reinterpret_cast<const W *>(in16);
  const size_t n = n16 * 16 / sizeof(W);
  const size_t chunk = (n + gridDim.x - 1) / gridDim.x;
  const size_t first = min(n, blockIdx.x * chunk), last = min(n, first + chunk);
  float acc[E] = {};
  size_t i = first + threadIdx.x;
  for (; i + (U - 1) * BS < last; i += U * BS) {
    W x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) x[u] = __ldg(in + i + u * BS);
#pragma unroll
    for (int u = 0; u < U; ++u) add_bf16<E>(acc, x[u]);
  }
  for (; i < last; i += BS) add_bf16<E>(acc, __ldg(in + i));
  float total = 0.f;
#pragma unroll
  for (int e = 0; e < E; ++e) total += acc[e];
  block_sum_store<BS>(total, partials + blockIdx.x);
}

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
               : "memory");
}

// The stage's copy: `bytes` (a multiple of 16) from global `src` into shared `dst`, completed
// on `bar`, which expects that many bytes (one arrival: the issuing thread's).
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes,
                                          uint64_t *bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
               "%2, [%3];" ::"r"(smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
  } while (!done);
}

template <int BS, int STAGES, int SB>
__global__ void __launch_bounds__(BS) bulk(const float4 *__restrict__ in, size_t n,
                                           float *partials) {
  extern __shared__ __align__(128) unsigned char smem[];
  uint64_t *full = reinterpret_cast<uint64_t *>(smem + STAGES * SB);
  const size_t chunk = (n + gridDim.x - 1) / gridDim.x;
  const size_t first = min(n, blockIdx.x * chunk), last = min(n, first + chunk);
  const size_t total = (last - first) * 16; // bytes of this block's chunk
  const size_t stages = (total + SB - 1) / SB;
  const unsigned char *src = reinterpret_cast<const unsigned char *>(in + first);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const auto issue = [&](size_t k) {
    const unsigned bytes = static_cast<unsigned>(min(size_t(SB), total - k * SB));
    bulk_copy(smem + (k % STAGES) * SB, src + k * SB, bytes, &full[k % STAGES]);
  };
  if (threadIdx.x == 0)
    for (size_t k = 0; k < STAGES && k < stages; ++k) issue(k);
  float acc = 0.f;
  for (size_t k = 0; k < stages; ++k) {
    const int s = static_cast<int>(k % STAGES);
    mbar_wait(&full[s], static_cast<unsigned>((k / STAGES) & 1));
    const unsigned vectors = static_cast<unsigned>(min(size_t(SB), total - k * SB) / 16);
    const float4 *b = reinterpret_cast<const float4 *>(smem + s * SB);
    for (unsigned i = threadIdx.x; i < vectors; i += BS) {
      const float4 v = b[i];
      acc += (v.x + v.y) + (v.z + v.w);
    }
    __syncthreads(); // every thread has read stage s before it is refilled
    if (threadIdx.x == 0 && k + STAGES < stages) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      issue(k + STAGES);
    }
  }
  block_sum_store<BS>(acc, partials + blockIdx.x);
}

__global__ void fill_ones(float *p, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = 1.f;
}

struct variant {
  std::string name;
  unsigned grid, block;
  size_t shared;
  void (*kernel)(const float4 *, size_t, float *);
  std::vector<float> us;
};

template <class K> int resident(K kernel, int block, size_t shared) {
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, shared));
  return per_sm;
}

template <int STAGES, int SB>
void add_bulk(std::vector<variant> &v, int sms, std::vector<int> per_sm_list) {
  constexpr size_t shared = STAGES * SB + STAGES * 8;
  CHECK(cudaFuncSetAttribute(bulk<256, STAGES, SB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(shared)));
  const int fits = resident(bulk<256, STAGES, SB>, 256, shared);
  for (int per_sm : per_sm_list) {
    if (per_sm > fits) continue;
    v.push_back({"bulk " + std::to_string(per_sm * sms) + " " + std::to_string(STAGES) + "x" +
                     std::to_string(SB / 1024) + "KB",
                 unsigned(per_sm * sms), 256, shared, bulk<256, STAGES, SB>, {}});
  }
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const double peak = theoretical_peak().gbps;
  const size_t bytes = size_t(1) << 29, n = bytes / 16;
  float4 *in = nullptr;
  float *partials = nullptr;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&partials, 1 << 20));
  fill_ones<<<1024, 256>>>(reinterpret_cast<float *>(in), bytes / 4);
  CHECK(cudaDeviceSynchronize());

  std::vector<variant> v;
  v.push_back({"gs 1024x4 x4 waves",
               unsigned(4 * sms * resident(plain<1024, 4, false>, 1024, 0)), 1024, 0,
               plain<1024, 4, false>, {}});
  v.push_back({"gs 512x4 x1 wave", unsigned(sms * resident(plain<512, 4, false>, 512, 0)), 512,
               0, plain<512, 4, false>, {}});
  for (unsigned parts : {512u, unsigned(4 * sms)})
    v.push_back({"chunk " + std::to_string(parts) + " 512x4", parts, 512, 0, plain<512, 4, true>, {}});
  v.push_back({"chunk 512 512x8", 512, 512, 0, plain<512, 8, true>, {}});
  v.push_back({"chunk 512 bf16 x8 512x4", 512, 512, 0, chunked_bf16<512, 4, 8>, {}});
  v.push_back({"chunk 512 bf16 x8 256x8", 512, 256, 0, chunked_bf16<256, 8, 8>, {}});
  v.push_back({"chunk 512 bf16 x8 256x4", 512, 256, 0, chunked_bf16<256, 4, 8>, {}});
  v.push_back({"chunk 512 bf16 x4 512x8", 512, 512, 0, chunked_bf16<512, 8, 4>, {}});
  v.push_back({"chunk 512 bf16 x2 512x8", 512, 512, 0, chunked_bf16<512, 8, 2>, {}});
  v.push_back({"chunk 512 bf16 x2 512x16", 512, 512, 0, chunked_bf16<512, 16, 2>, {}});
  add_bulk<4, 16384>(v, sms, {2, 3});
  add_bulk<8, 8192>(v, sms, {2, 3});
  add_bulk<3, 16384>(v, sms, {2, 3, 4});
  add_bulk<6, 8192>(v, sms, {2, 3, 4});
  add_bulk<2, 32768>(v, sms, {2, 3});
  add_bulk<4, 32768>(v, sms, {1});

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> host(1 << 18);
  for (auto &x : v) { // warm up, and check the sum: every float is 1
    x.kernel<<<x.grid, x.block, x.shared>>>(in, n, partials);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), partials, x.grid * sizeof(float), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (unsigned i = 0; i < x.grid; ++i) sum += host[i];
    if (sum != double(bytes / 4)) {
      std::printf("%s: sum %.0f, expected %zu\n", x.name.c_str(), sum, bytes / 4);
      return 1;
    }
  }
  for (int round = 0; round < 40; ++round)
    for (size_t j = 0; j < v.size(); ++j) {
      variant &x = v[(j + round) % v.size()];
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaEventRecord(a));
      x.kernel<<<x.grid, x.block, x.shared>>>(in, n, partials);
      CHECK(cudaEventRecord(b));
      x.us.push_back(elapsed_us(a, b));
    }
  std::printf("# %s, %d SMs, HBM peak %.0f GB/s; 512 MB read, 40 rounds, medians\n", prop.name,
              sms, peak);
  std::printf("| read | blocks | us | %% of peak | x gs 1024x4 x4 waves |\n|---|---|---|---|---|\n");
  const float base = median_of(v[0].us);
  for (auto &x : v) {
    const float m = median_of(x.us);
    std::printf("| %s | %u | %.1f | %.1f | %.3f |\n", x.name.c_str(), x.grid, m,
                100 * bytes / (m * 1e-6) / 1e9 / peak, base / m);
  }
  return 0;
}
