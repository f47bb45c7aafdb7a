// Block-level reductions built from the warp pieces (rt_warp.cuh).
//
//   tree           the seeds' shared-memory tree, completely unrolled on the compile-time
//                  block size (Harris's reduce5): halve while more than 64 elements remain,
//                  with __syncthreads() between steps; the last 64 go to the first warp.
//   warp_partials  every warp reduces its own 32 values; one partial per warp goes through
//                  shared memory; the first warp reduces the partials (CUB's
//                  BLOCK_REDUCE_WARP_REDUCTIONS). One __syncthreads() instead of log2(BS)-5.
//
// All threads of the block call block_reduce; the result is valid in thread 0 only.
#pragma once

#include "common/rt_warp.cuh"

namespace rt {

enum class block_strategy { tree, warp_partials };

// Shared-memory elements block_reduce needs: the volatile warp forms reduce in shared
// memory, so they need a slot per thread; the register forms only one slot per warp.
// Shared slots a block reduction needs. The volatile warp step reads s[lane + 16] for every
// lane (lanes 16..31 compute values nobody uses, as in the seeds), so a warp's slice is read
// 16 slots past its end. The tree gives its one working warp BS + 16 slots; warp_partials
// gives each warp a slice of its own of 32 + 16 slots, so that no warp reads the slice
// another warp is writing (with shared 32-slot slices compute-sanitizer's racecheck reported
// cross-warp hazards on an H200, and a 32-thread block read out of bounds).
constexpr unsigned volatile_slice = 48;

template <unsigned BS, warp_strategy W, block_strategy B>
__host__ __device__ constexpr unsigned block_reduce_slots() {
  if (uses_smem<W>())
    return B == block_strategy::tree ? BS + 16u : (BS / 32u) * volatile_slice;
  return B == block_strategy::tree ? BS : 32u;
}

template <class T, class Op, unsigned BS, warp_strategy W>
__device__ __forceinline__ T block_reduce_tree(T v, T *s) {
  const Op op{};
  const unsigned tid = threadIdx.x;
  s[tid] = v;
  __syncthreads();
#pragma unroll
  for (unsigned stride = BS / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] = op(s[tid], s[tid + stride]);
    __syncthreads();
  }
  T r = v;
  if (tid < 32) {
    constexpr unsigned span = BS < 64 ? BS : 64;
    if constexpr (uses_smem<W>()) {
      warp_reduce_smem<T, Op, W, span>(s, tid);
      r = s[0];
    } else {
      T x = s[tid];
      if (span == 64) x = op(x, s[tid + 32]);
      r = warp_reduce_value<T, Op, W>(x);
    }
  }
  return r;
}

template <class T, class Op, unsigned BS, warp_strategy W>
__device__ __forceinline__ T block_reduce_warp_partials(T v, T *s) {
  constexpr unsigned warps = BS / 32;
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  if constexpr (uses_smem<W>()) {
    volatile T *ws = s + warp * volatile_slice;
    ws[lane] = v;
    __syncwarp();
    warp_reduce_smem<T, Op, W, 32>(ws, lane);
    if constexpr (warps == 1) return s[0];
    __syncthreads();
    T r = v;
    if (warp == 0) {
      const T x = lane < warps ? s[lane * volatile_slice] : Op::template identity<T>();
      __syncwarp(); // every lane has read its partial before lane 1..31 overwrite s[1..31]
      s[lane] = x;
      __syncwarp();
      warp_reduce_smem<T, Op, W, 32>(s, lane);
      r = s[0];
    }
    return r;
  } else {
    T x = warp_reduce_value<T, Op, W>(v);
    if constexpr (warps == 1) return x;
    if (lane == 0) s[warp] = x;
    __syncthreads();
    if (warp == 0) {
      x = lane < warps ? s[lane] : Op::template identity<T>();
      x = warp_reduce_value<T, Op, W>(x);
    }
    return x;
  }
}

template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B>
__device__ __forceinline__ T block_reduce(T v, T *s) {
  static_assert(BS >= 32 && BS <= 1024 && (BS & (BS - 1)) == 0,
                "block size must be a power of two in [32, 1024]");
  if constexpr (B == block_strategy::tree)
    return block_reduce_tree<T, Op, BS, W>(v, s);
  else
    return block_reduce_warp_partials<T, Op, BS, W>(v, s);
}

} // namespace rt
