// The kernels of small_pass_probe.cu, compiled by NVRTC with kernel_templates on the include
// path, as reducetune compiles a tunable point. All sum n floats in one block of 256 threads
// (float32 sum at 2^12: the unit whose best point stays at 0.96-0.98 x CUB in the tuner's
// protocol after six minutes, issue 25). Each takes the tunable ABI (in, out, n, partials,
// ticket) so that one launcher serves all:
//   tunable      the family's pass at the six-minute best (bs 256, u 4, v 4, shuffle, warp
//                partials, ticket), exactly as reducetune instantiates it
//   tunable_2p   the same with the two_pass finish (a grid of one writes out directly)
//   lean32       the pass with 32-bit indices where the grid's elements fit them (a uniform
//                branch), else the family's 64-bit thread_reduce
//   loads_first  lean32 whose aligned whole tiles are loaded before the head and tail are
//                looked at (the head and tail after the loop)
//   plain_rt     launch_probe's loop (float4 loads, a block stride) with the family's block
//                reduce and ticket finish: what the reduce and finish cost against probe_sum
//   probe_sum    launch_probe_kernel.cuh's kernel (the plain single block that tied CUB)
//   short_rt     plain_rt whose second level reduces the warps' partials in log2(warps)
//                shuffle steps (xor, width = warps) instead of a whole warp's five
//   tunable_short  the tunable pass's thread loop with short_rt's block reduce, ticket finish
#include "tunable/tunable.cuh"

namespace probe {

using rt::acc_t;
using rt::block_strategy;
using rt::finish;
using rt::warp_strategy;
constexpr unsigned BS = 256, U = 4, V = 4;
constexpr warp_strategy W = warp_strategy::shuffle;
constexpr block_strategy B = block_strategy::warp_partials;

// thread_reduce with 32-bit indices: the grid's vectors fit 32 bits (checked by the caller).
template <bool LoadsFirst>
__device__ __forceinline__ float thread_reduce32(const float *__restrict__ in, unsigned n) {
  const rt::op_sum op{};
  float acc = 0.f;
  const unsigned gtid = blockIdx.x * BS + threadIdx.x;
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<unsigned long long>(in) / 4) % V;
  unsigned head = (V - mis) % V;
  if (head > n) head = n;
  if (!LoadsFirst && gtid < head) acc = op(acc, in[gtid]);
  const float *aligned = in + head;
  const unsigned m = n - head, nvec = m / V;
  const float4 *pv = reinterpret_cast<const float4 *>(aligned);
  const unsigned stride = gridDim.x * BS * U;
  unsigned i = blockIdx.x * BS * U + threadIdx.x;
  for (; i + (U - 1) * BS < nvec; i += stride) {
    float4 x[U];
#pragma unroll
    for (unsigned k = 0; k < U; ++k) x[k] = pv[i + k * BS];
#pragma unroll
    for (unsigned k = 0; k < U; ++k) {
      acc = op(acc, x[k].x);
      acc = op(acc, x[k].y);
      acc = op(acc, x[k].z);
      acc = op(acc, x[k].w);
    }
  }
#pragma unroll
  for (unsigned k = 0; k < U; ++k)
    if (i + k * BS < nvec) {
      const float4 x = pv[i + k * BS];
      acc = op(acc, x.x);
      acc = op(acc, x.y);
      acc = op(acc, x.z);
      acc = op(acc, x.w);
    }
  if (LoadsFirst && gtid < head) acc = op(acc, in[gtid]);
  const unsigned tail = m - nvec * V;
  if (gtid < tail) acc = op(acc, aligned[nvec * V + gtid]);
  return acc;
}

template <bool LoadsFirst>
__device__ __forceinline__ void lean_pass(const float *__restrict__ in, float *out,
                                          unsigned long long n, float *partials,
                                          unsigned int *ticket) {
  __shared__ float s[rt::block_reduce_slots<BS, W, B>()];
  const unsigned long long grid_elems = static_cast<unsigned long long>(gridDim.x) * BS * U * V;
  const float acc = n + grid_elems < (1ull << 31)
                        ? thread_reduce32<LoadsFirst>(in, static_cast<unsigned>(n))
                        : rt::tunable::thread_reduce<float, rt::op_sum, BS, U, V>(in, n);
  const float r = rt::block_reduce<float, rt::op_sum, BS, W, B>(acc, s);
  rt::finish_block<float, rt::op_sum, BS, W, B, finish::ticket, float>(r, out, partials, ticket,
                                                                       s);
}

// rt::block_reduce_warp_partials (shuffle) with a second level of log2(warps) steps: the
// warps' partials are in lanes 0 .. warps - 1 only, so the steps above warps / 2 add
// identities (the same bits: x + 0 == x for every x but -0, and -0 + 0 == +0 is what the
// full tree computes too only where a partial is -0: compared by the probe's sums only).
__device__ __forceinline__ float block_reduce_short(float v, float *s) {
  constexpr unsigned warps = BS / 32;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (lane == 0) s[warp] = v;
  __syncthreads();
  float x = 0.f;
  if (warp == 0) {
    x = lane < warps ? s[lane] : 0.f;
#pragma unroll
    for (unsigned off = warps / 2; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
  }
  return x;
}

} // namespace probe

extern "C" __global__ void __launch_bounds__(256)
    short_rt(const float *__restrict__ in, float *out, unsigned long long n, float *partials,
             unsigned int *ticket) {
  using namespace probe;
  __shared__ float s[32];
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float acc = 0.f;
  for (unsigned long long i = threadIdx.x; i < n / 4; i += 256) {
    const float4 v = in4[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  const float r = block_reduce_short(acc, s);
  rt::finish_block<float, rt::op_sum, BS, W, B, finish::ticket, float>(r, out, partials, ticket,
                                                                       s);
}

extern "C" __global__ void __launch_bounds__(256)
    tunable_short(const float *__restrict__ in, float *out, unsigned long long n, float *partials,
                  unsigned int *ticket) {
  using namespace probe;
  __shared__ float s[32];
  const float acc = rt::tunable::thread_reduce<float, rt::op_sum, BS, U, V>(in, n);
  const float r = block_reduce_short(acc, s);
  rt::finish_block<float, rt::op_sum, BS, W, B, finish::ticket, float>(r, out, partials, ticket,
                                                                       s);
}

extern "C" __global__ void __launch_bounds__(256)
    lean32(const float *__restrict__ in, float *out, unsigned long long n, float *partials,
           unsigned int *ticket) {
  probe::lean_pass<false>(in, out, n, partials, ticket);
}

extern "C" __global__ void __launch_bounds__(256)
    loads_first(const float *__restrict__ in, float *out, unsigned long long n, float *partials,
                unsigned int *ticket) {
  probe::lean_pass<true>(in, out, n, partials, ticket);
}

extern "C" __global__ void __launch_bounds__(256)
    plain_rt(const float *__restrict__ in, float *out, unsigned long long n, float *partials,
             unsigned int *ticket) {
  using namespace probe;
  __shared__ float s[rt::block_reduce_slots<BS, W, B>()];
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float acc = 0.f;
  for (unsigned long long i = threadIdx.x; i < n / 4; i += 256) {
    const float4 v = in4[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  const float r = rt::block_reduce<float, rt::op_sum, BS, W, B>(acc, s);
  rt::finish_block<float, rt::op_sum, BS, W, B, finish::ticket, float>(r, out, partials, ticket,
                                                                       s);
}

extern "C" __global__ void __launch_bounds__(256)
    probe_sum(const float *__restrict__ in, float *out, unsigned long long n, float *,
              unsigned int *) {
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float acc = 0.f;
  for (unsigned long long i = threadIdx.x; i < n / 4; i += 256) {
    const float4 v = in4[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ float s[8];
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < 8 ? s[threadIdx.x] : 0.f;
    for (int o = 4; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) *out = v;
  }
}
