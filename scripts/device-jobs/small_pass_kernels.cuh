// The kernels of small_pass_probe.cu, compiled by NVRTC with kernel_templates on the include
// path, as reducetune compiles a tunable point (and into the probe by nvcc, for the "_nvcc"
// contenders). All sum n floats in one block of 256 threads
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
//   cub_like     CUB's single-tile kernel's loads (its SASS, CCCL 3.0, sm_90): 16 scalar
//                ld.global.nc a thread, 256 apart (each warp load one 128-byte line), all
//                issued before any add, added as a pairwise tree; the family's block reduce
//   nc_vec       probe_sum's float4 loop with ld.global.nc (__ldg) loads
//   nc_vec_all   4 float4 __ldg loads a thread issued before any add (no loop), pairwise adds
//   tunable_one  the family's pass with a straight path where every thread of the grid has at
//                most one tile (nvec <= grid * BS * UNROLL, 32-bit indices): the head, the
//                tile's UNROLL vectors and the tail loaded (each where present) before any is
//                combined, then combined in the loop's order (head, k = 0 .. UNROLL - 1, tail):
//                the same bits; the loop elsewhere
//   tunable_one_a  tunable_one's path only where the input starts on a vector and n is a
//                multiple of VEC (no head, no tail: the UNROLL vectors alone), else the loop
//   all_seq      nc_vec_all with the family's sequential adds (k, then e: its order)
//   all_plain    nc_vec_all with plain loads (ld.global, not __ldg)
//   all_pred     nc_vec_all with each load under the family's bound (i + k * BS < nvec)
#include "tunable/tunable.cuh"

// Every contender's entry: an unmangled name the probe looks up, the tunable ABI (in, out, n,
// partials, ticket) and blocks of 256.
#define PROBE_ENTRY(name)                                                                          \
  extern "C" __global__ void __launch_bounds__(256)                                                \
      name(const float *__restrict__ in, float *out, unsigned long long n, float *partials,       \
           unsigned int *ticket)

namespace probe {

using rt::acc_t;
using rt::block_strategy;
using rt::finish;
using rt::warp_strategy;
constexpr unsigned BS = 256, U = 4, V = 4;
constexpr warp_strategy W = warp_strategy::shuffle;
constexpr block_strategy B = block_strategy::warp_partials;

// The family's block reduce (warp partials, shuffles) and ticket finish of a thread's acc:
// every kernel here but short_rt and tunable_short ends with it.
__device__ __forceinline__ void reduce_and_finish(float acc, float *out, float *partials,
                                                  unsigned int *ticket) {
  __shared__ float s[rt::block_reduce_slots<BS, W, B>()];
  const float r = rt::block_reduce<float, rt::op_sum, BS, W, B>(acc, s);
  rt::finish_block<float, rt::op_sum, BS, W, B, finish::ticket, float>(r, out, partials, ticket,
                                                                       s);
}

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
  const unsigned long long grid_elems = static_cast<unsigned long long>(gridDim.x) * BS * U * V;
  const float acc = n + grid_elems < (1ull << 31)
                        ? thread_reduce32<LoadsFirst>(in, static_cast<unsigned>(n))
                        : rt::tunable::thread_reduce<float, rt::op_sum, BS, U, V>(in, n);
  reduce_and_finish(acc, out, partials, ticket);
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

// thread_reduce's straight path: at most one tile per thread, every load issued first.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> one_tile(const T *__restrict__ in, unsigned n) {
  const Op op{};
  const unsigned gtid = blockIdx.x * BS + threadIdx.x;
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<unsigned long long>(in) / sizeof(T)) % VEC;
  const unsigned head = min((VEC - mis) % VEC, n);
  const T *aligned = in + head;
  const unsigned m = n - head, nvec = m / VEC, tail = m - nvec * VEC;
  const rt::vec<T, VEC> *pv = reinterpret_cast<const rt::vec<T, VEC> *>(aligned);
  const unsigned i = blockIdx.x * BS * UNROLL + threadIdx.x;
  T h{}, t{};
  rt::vec<T, VEC> x[UNROLL];
  if (gtid < head) h = in[gtid];
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k)
    if (i + k * BS < nvec) x[k] = pv[i + k * BS];
  if (gtid < tail) t = aligned[nvec * VEC + gtid];
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  if (gtid < head) acc = op(acc, rt::to_acc(h));
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k)
    if (i + k * BS < nvec)
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) acc = op(acc, rt::to_acc(x[k].v[e]));
  if (gtid < tail) acc = op(acc, rt::to_acc(t));
  return acc;
}

// one_tile without a head or a tail: in on a vector boundary, n a multiple of VEC.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> one_aligned_tile(const T *__restrict__ in, unsigned n) {
  const Op op{};
  const unsigned nvec = n / VEC, i = blockIdx.x * BS * UNROLL + threadIdx.x;
  const rt::vec<T, VEC> *pv = reinterpret_cast<const rt::vec<T, VEC> *>(in);
  rt::vec<T, VEC> x[UNROLL];
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k)
    if (i + k * BS < nvec) x[k] = pv[i + k * BS];
  acc_t<T> acc = Op::template identity<acc_t<T>>();
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k)
    if (i + k * BS < nvec)
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) acc = op(acc, rt::to_acc(x[k].v[e]));
  return acc;
}

} // namespace probe

PROBE_ENTRY(tunable_one_a) {
  using namespace probe;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * BS * U;
  const bool straight = n <= stride * V && stride * V < (1ull << 31) && n % V == 0 &&
                        reinterpret_cast<unsigned long long>(in) % (V * sizeof(float)) == 0;
  const float acc =
      straight ? one_aligned_tile<float, rt::op_sum, BS, U, V>(in, static_cast<unsigned>(n))
               : rt::tunable::thread_reduce<float, rt::op_sum, BS, U, V>(in, n);
  reduce_and_finish(acc, out, partials, ticket);
}

PROBE_ENTRY(tunable_one) {
  using namespace probe;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * BS * U;
  const float acc = n <= stride * V && stride * V < (1ull << 31)
                        ? one_tile<float, rt::op_sum, BS, U, V>(in, static_cast<unsigned>(n))
                        : rt::tunable::thread_reduce<float, rt::op_sum, BS, U, V>(in, n);
  reduce_and_finish(acc, out, partials, ticket);
}

PROBE_ENTRY(short_rt) {
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

PROBE_ENTRY(tunable_short) {
  using namespace probe;
  __shared__ float s[32];
  const float acc = rt::tunable::thread_reduce<float, rt::op_sum, BS, U, V>(in, n);
  const float r = block_reduce_short(acc, s);
  rt::finish_block<float, rt::op_sum, BS, W, B, finish::ticket, float>(r, out, partials, ticket,
                                                                       s);
}

PROBE_ENTRY(cub_like) {
  using namespace probe;
  float v[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) v[k] = __ldg(in + threadIdx.x + 256 * k);
#pragma unroll
  for (int w = 1; w < 16; w *= 2)
#pragma unroll
    for (int k = 0; k < 16; k += 2 * w) v[k] += v[k + w];
  reduce_and_finish(v[0], out, partials, ticket);
}

PROBE_ENTRY(nc_vec) {
  using namespace probe;
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float acc = 0.f;
  for (unsigned long long i = threadIdx.x; i < n / 4; i += 256) {
    const float4 v = __ldg(in4 + i);
    acc += (v.x + v.y) + (v.z + v.w);
  }
  reduce_and_finish(acc, out, partials, ticket);
}

PROBE_ENTRY(nc_vec_all) {
  using namespace probe;
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) v[k] = __ldg(in4 + threadIdx.x + 256 * k);
  float a[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) a[k] = (v[k].x + v[k].y) + (v[k].z + v[k].w);
  reduce_and_finish((a[0] + a[1]) + (a[2] + a[3]), out, partials, ticket);
}

namespace probe {
// nc_vec_all's body with the three choices the family differs in: the load (Nc: __ldg), the
// bound per load (Pred), the order of the adds (Seq: acc += each element in k, e order).
template <bool Nc, bool Pred, bool Seq>
__device__ __forceinline__ void all_loads(const float *__restrict__ in, float *out,
                                          unsigned long long n, float *partials,
                                          unsigned int *ticket) {
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  const unsigned nvec = static_cast<unsigned>(n / 4);
  float4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const unsigned at = threadIdx.x + 256 * k;
    if (!Pred || at < nvec) v[k] = Nc ? __ldg(in4 + at) : in4[at];
  }
  float acc = 0.f;
  if constexpr (Seq) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (!Pred || threadIdx.x + 256 * k < nvec)
        acc = (((acc + v[k].x) + v[k].y) + v[k].z) + v[k].w;
  } else {
    float a[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) a[k] = (v[k].x + v[k].y) + (v[k].z + v[k].w);
    acc = (a[0] + a[1]) + (a[2] + a[3]);
  }
  reduce_and_finish(acc, out, partials, ticket);
}
} // namespace probe

PROBE_ENTRY(all_seq) {
  probe::all_loads<true, false, true>(in, out, n, partials, ticket);
}

PROBE_ENTRY(all_plain) {
  probe::all_loads<false, false, false>(in, out, n, partials, ticket);
}

PROBE_ENTRY(all_pred) {
  probe::all_loads<true, true, false>(in, out, n, partials, ticket);
}

PROBE_ENTRY(lean32) {
  probe::lean_pass<false>(in, out, n, partials, ticket);
}

PROBE_ENTRY(loads_first) {
  probe::lean_pass<true>(in, out, n, partials, ticket);
}

PROBE_ENTRY(plain_rt) {
  using namespace probe;
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  float acc = 0.f;
  for (unsigned long long i = threadIdx.x; i < n / 4; i += 256) {
    const float4 v = in4[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  reduce_and_finish(acc, out, partials, ticket);
}

PROBE_ENTRY(probe_sum) {
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
