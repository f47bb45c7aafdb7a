// Warp-level reductions (CUB layering: the warp piece, used by block pieces and kernels).
//
// Four strategies, the search space's `warp` parameter:
//   volatile_sync    the seeds' last-warp unroll on volatile shared memory, made correct on
//                    Volta and later: each step reads, __syncwarp(), writes, __syncwarp().
//   volatile_unsafe  the seeds' exact form (no __syncwarp()): relies on implicit warp-synchronous
//                    execution, which independent thread scheduling (sm_70+) no longer
//                    guarantees. Kept on purpose so the verifier and compute-sanitizer can
//                    show what it does; flagged in every family that offers it.
//   shuffle          register values combined with __shfl_down_sync.
//   redux            __reduce_{add,min,max}_sync: int32 only, sum/min/max only, sm_80+.
//
// The volatile forms reduce s[0 .. 2*W) for W = min(width, 32) lanes into s[0] (lane 0);
// the value forms reduce one register per lane into lane 0's register.
#pragma once

#include "common/rt_ops.cuh"

namespace rt {

enum class warp_strategy { volatile_sync, volatile_unsafe, shuffle, redux };

constexpr unsigned full_mask = 0xffffffffu;

// Seed form (Harris's warpReduce<blockSize>, the course's vsmem unroll): `span` is how many
// elements the steps start from (64 for a full warp: the first step adds s[tid + 32]).
// Only lanes tid < 32 call it.
template <class T, class Op, unsigned Span>
__device__ __forceinline__ void warp_reduce_volatile_unsafe(volatile T *s, unsigned tid) {
  const Op op{};
  if (Span >= 64) s[tid] = op(s[tid], s[tid + 32]);
  if (Span >= 32) s[tid] = op(s[tid], s[tid + 16]);
  if (Span >= 16) s[tid] = op(s[tid], s[tid + 8]);
  if (Span >= 8) s[tid] = op(s[tid], s[tid + 4]);
  if (Span >= 4) s[tid] = op(s[tid], s[tid + 2]);
  if (Span >= 2) s[tid] = op(s[tid], s[tid + 1]);
}

// Volta-safe form (CUDA programming guide, "independent thread scheduling"): the read of the
// neighbour and the write of the own slot are separated by __syncwarp(), so no lane reads a
// slot another lane is writing in the same step. All 32 lanes must call it.
template <class T, class Op, unsigned Span>
__device__ __forceinline__ void warp_reduce_volatile_sync(volatile T *s, unsigned tid) {
  const Op op{};
  T v = s[tid];
#pragma unroll
  for (unsigned off = 32; off >= 1; off >>= 1) {
    if (Span >= 2 * off) {
      v = op(v, s[tid + off]);
      __syncwarp();
      s[tid] = v;
      __syncwarp();
    }
  }
}

template <class T, class Op, warp_strategy W, unsigned Span>
__device__ __forceinline__ void warp_reduce_smem(volatile T *s, unsigned tid) {
  static_assert(W == warp_strategy::volatile_sync || W == warp_strategy::volatile_unsafe,
                "warp_reduce_smem is the shared-memory (volatile) form");
  if constexpr (W == warp_strategy::volatile_sync)
    warp_reduce_volatile_sync<T, Op, Span>(s, tid);
  else
    warp_reduce_volatile_unsafe<T, Op, Span>(s, tid);
}

template <class T, class Op> __device__ __forceinline__ T warp_reduce_shuffle(T v) {
  const Op op{};
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_down_sync(full_mask, v, off));
  return v;
}

// redux.sync: one instruction for a whole warp, every lane gets the result.
template <class T, class Op> __device__ __forceinline__ T warp_reduce_redux(T v) {
  static_assert(is_same<T, int>::value, "redux (__reduce_*_sync) exists only for 32-bit ints");
  static_assert(is_same<Op, op_sum>::value || is_same<Op, op_min>::value ||
                    is_same<Op, op_max>::value,
                "redux has add, min and max only");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  static_assert(sizeof(T) == 0, "redux (__reduce_*_sync) needs sm_80 or later");
  return v;
#else
  if constexpr (is_same<Op, op_sum>::value)
    return __reduce_add_sync(full_mask, v);
  else if constexpr (is_same<Op, op_min>::value)
    return __reduce_min_sync(full_mask, v);
  else
    return __reduce_max_sync(full_mask, v);
#endif
}

// Register form of the value strategies (shuffle, redux); all 32 lanes call it.
template <class T, class Op, warp_strategy W> __device__ __forceinline__ T warp_reduce_value(T v) {
  static_assert(W == warp_strategy::shuffle || W == warp_strategy::redux,
                "warp_reduce_value is the register form");
  if constexpr (W == warp_strategy::shuffle)
    return warp_reduce_shuffle<T, Op>(v);
  else
    return warp_reduce_redux<T, Op>(v);
}

template <warp_strategy W> __host__ __device__ constexpr bool uses_smem() {
  return W == warp_strategy::volatile_sync || W == warp_strategy::volatile_unsafe;
}

} // namespace rt
