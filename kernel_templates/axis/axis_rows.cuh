// Rows reduced by lanes of one warp (thread, group, warp strategies) or by whole blocks
// (block, split strategies). An output j = o * inner + i reduces the row
// in[(o * r + k) * inner + i], k in [0, r).
//
//   rows_by_lanes   L lanes per row (L = 1: a thread per output; 2..16: sub-warp groups, 32/L
//                   rows per warp; 32: a warp per row); the lanes' partials meet in a shuffle
//                   tree of log2(L) steps.
//   rows_by_blocks  S blocks per row: block s of a row reduces the segment
//                   [s * ceil(r/S), (s+1) * ceil(r/S)) (the non-empty ones: split_row) and
//                   its threads' partials meet in
//                   rt::block_reduce (per-warp shuffles, one partial per warp through shared
//                   memory). S = 1 writes the output; S > 1 writes partials[j * parts + s]
//                   and final_pass (axis.cuh) combines the S partials of each output in an
//                   order fixed by S. No atomics: every point is run_to_run.
//
// Both loop over their work with a grid stride, so any grid is correct and no reduction
// order depends on the grid or on how many rows there are: only on r and the point.
#pragma once

#include "axis/axis_thread.cuh"
#include "common/rt_block.cuh"

namespace rt {
namespace axis {

// The L lanes of a group combine their partials into the group's first lane.
template <class A, class Op, unsigned L> __device__ __forceinline__ A group_reduce(A v) {
  const Op op{};
#pragma unroll
  for (unsigned off = L / 2; off > 0; off >>= 1) v = op(v, __shfl_down_sync(full_mask, v, off, L));
  return v;
}

// Short rows (each lane at most one vector: short_rows): a warp takes UNROLL consecutive groups
// of 32 / L rows per step and issues all their loads before it combines any. One group per
// step left one 16-byte load in flight per lane (bfloat16 rows of 16, 2 lanes of vec 8: 56 %
// of the H200's peak); each row is still combined and shuffled as rows_by_lanes does, so its
// bits are the same. family.json's grid divides by UNROLL where this path runs.
template <unsigned L, unsigned VEC>
__device__ __forceinline__ bool short_rows(unsigned long long r, unsigned long long inner) {
  return r <= static_cast<unsigned long long>(L) * (inner == 1 ? VEC : 1);
}

// Groups of rows a warp takes per step on short rows: UNROLL, but at most 2 in a block of 1024
// threads, where ptxas has 64 registers a thread (sm_90: bfloat16 rows at 2 lanes of vec 8
// kept a 16-byte stack frame at 4 groups, 40 at 8; float32 at 32 lanes of vec 4, 184 at 8;
// 512 threads of 8 groups took up to 124 registers and no stack). family.json's grid says
// the same.
template <unsigned BS, unsigned UNROLL>
inline constexpr unsigned short_groups_per_step = BS >= 1024 && UNROLL > 2 ? 2 : UNROLL;

template <class T, class Op, unsigned BS, unsigned L, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ void short_rows_by_lanes(const T *__restrict__ in, T *out,
                                                    unsigned long long outer, unsigned long long r,
                                                    unsigned long long inner) {
  constexpr unsigned rows_per_warp = 32 / L, rows_per_step = rows_per_warp * UNROLL;
  static_assert(UNROLL > 1, "one group per step is rows_by_lanes' loop");
  const unsigned long long outputs = outer * inner;
  const unsigned lane = threadIdx.x % 32;
  const auto row_start = [&](unsigned long long j) {
    unsigned long long o, i;
    div_mod(j, inner, o, i);
    return in + o * r * inner + i;
  };
  // The loop bound is the warp's first row, as in rows_by_lanes: the shuffles need all 32.
  for (unsigned long long base =
           (static_cast<unsigned long long>(blockIdx.x) * (BS / 32) + threadIdx.x / 32) *
           rows_per_step;
       base < outputs;
       base += static_cast<unsigned long long>(gridDim.x) * (BS / 32) * rows_per_step) {
    short_share<T, VEC> x[UNROLL];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) {
      const unsigned long long j = base + u * rows_per_warp + lane / L;
      // past the last row: no element, the identity, shuffled with the others
      x[u] = load_short<T, L, VEC>(row_start(j < outputs ? j : 0), j < outputs ? r : 0, inner,
                                   lane % L);
    }
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) {
      const unsigned long long j = base + u * rows_per_warp + lane / L;
      acc_t<T> v = combine_short<T, Op, L, VEC>(
          x[u], [&] { return row_start(j); }, r, lane % L);
      v = group_reduce<acc_t<T>, Op, L>(v);
      if (lane % L == 0 && j < outputs) out[j] = from_acc<T>(v);
    }
  }
}

template <class T, class Op, unsigned BS, unsigned L, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ void rows_by_lanes(const T *__restrict__ in, T *out,
                                              unsigned long long outer, unsigned long long r,
                                              unsigned long long inner) {
  static_assert(L >= 1 && L <= 32 && (L & (L - 1)) == 0, "lanes per row divide a warp");
  static_assert(BS % 32 == 0, "whole warps");
  constexpr unsigned rows_per_warp = 32 / L, rows_per_block = BS / L;
  constexpr unsigned groups = short_groups_per_step<BS, UNROLL>;
  if constexpr (L > 1 && groups > 1) { // a thread per output keeps its grid and loop
    if (short_rows<L, VEC>(r, inner)) {
      short_rows_by_lanes<T, Op, BS, L, groups, VEC>(in, out, outer, r, inner);
      return;
    }
  }
  const unsigned long long outputs = outer * inner;
  const unsigned lane = threadIdx.x % 32;
  // The loop bound is the warp's first row, so every lane of a warp runs the same iterations:
  // the shuffles need all 32.
  for (unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * rows_per_block +
                                 (threadIdx.x / 32) * rows_per_warp;
       base < outputs; base += static_cast<unsigned long long>(gridDim.x) * rows_per_block) {
    const unsigned long long j = base + lane / L;
    acc_t<T> v = Op::template identity<acc_t<T>>();
    if (j < outputs) {
      unsigned long long o, i;
      div_mod(j, inner, o, i);
      v = lane_reduce<T, Op, L, UNROLL, VEC>(in + o * r * inner + i, r, inner, lane % L);
    }
    if constexpr (L > 1) v = group_reduce<acc_t<T>, Op, L>(v);
    if (lane % L == 0 && j < outputs) out[j] = from_acc<T>(v);
  }
}

template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC, unsigned S>
__device__ __forceinline__ void rows_by_blocks(const T *__restrict__ in, T *out,
                                               unsigned long long outer, unsigned long long r,
                                               unsigned long long inner, acc_t<T> *partials) {
  using A = acc_t<T>;
  constexpr warp_strategy W = warp_strategy::shuffle;
  constexpr block_strategy B = block_strategy::warp_partials;
  __shared__ A s[block_reduce_slots<BS, W, B>()];
  const unsigned long long outputs = outer * inner;
  const row_split sp = split_row(r, S);
  const unsigned long long chunk = sp.chunk;
  for (unsigned long long b = blockIdx.x; b < outputs * sp.parts; b += gridDim.x) {
    unsigned long long j, part, o, i;
    div_mod(b, sp.parts, j, part);
    div_mod(j, inner, o, i);
    const unsigned long long k0 = min_u64(r, part * chunk), cnt = min_u64(r, k0 + chunk) - k0;
    const A v =
        lane_reduce<T, Op, BS, UNROLL, VEC>(in + (o * r + k0) * inner + i, cnt, inner, threadIdx.x);
    const A total = block_reduce<A, Op, BS, W, B>(v, s);
    if (threadIdx.x == 0) {
      if constexpr (S == 1)
        out[j] = from_acc<T>(total);
      else
        partials[j * sp.parts + part] = total;
    }
    __syncthreads(); // the next row's block_reduce reuses s
  }
}

} // namespace axis
} // namespace rt
