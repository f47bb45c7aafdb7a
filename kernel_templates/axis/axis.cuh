// The axis family: reductions of the middle axis of a contiguous tensor viewed as
// (outer, r, inner) into (outer, inner) (DESIGN.md, "Problems and their shapes"). Layered as
// CUB is: lanes (axis_thread.cuh), groups and blocks (axis_rows.cuh, axis_tile.cuh), short
// rows staged through shared memory (axis_staged.cuh), and these thin entries. Parameters are
// declared in family.json.
//
// Kernel ABI "axis" (docs/architecture.md): every entry takes
//     (const T *in, T *out, unsigned long long outer, unsigned long long r,
//      unsigned long long inner, acc_t<T> *partials)
// out holds outer * inner results, out[o * inner + i]. partials (split > 1 only) holds
// parts * outer * inner accumulators, parts = split_row(r, split).parts (at most split, at
// most r: the non-empty chunks), output-major (partials[j * parts + s]), written by pass and
// read by final_pass. Sized by split instead, a 512-way split of 2^24 columns with r = 16
// asked for 32 GiB of which 16 / 512 was ever written.
#pragma once

#include "axis/axis_rows.cuh"
#include "axis/axis_staged.cuh"
#include "axis/axis_tile.cuh"

namespace rt {
namespace axis {

// What cooperates on one output (family.json's `strategy`).
enum class strategy { thread, group, warp, block, split, tile, staged };

template <class T, class Op, strategy St, unsigned BS, unsigned L, unsigned VEC, unsigned UNROLL,
          unsigned S>
__global__ void __launch_bounds__(BS)
    pass(const T *__restrict__ in, T *out, unsigned long long outer, unsigned long long r,
         unsigned long long inner, acc_t<T> *partials) {
  static_assert(BS >= 32 && BS <= 1024 && (BS & (BS - 1)) == 0,
                "block size is a power of two in [32, 1024]");
  static_assert(S >= 1 && (S & (S - 1)) == 0, "split is a power of two");
  static_assert(S == 1 || St == strategy::split || St == strategy::tile,
                "only split and tile divide r across blocks");
  if constexpr (St == strategy::thread) {
    static_assert(L == 1, "a thread per output: one lane");
    // VEC > 1: each thread owns VEC adjacent columns, read with vector loads (a column tile
    // of one row of BS lanes: no tree, each column still combined in k order by one thread,
    // the scalar form's order and bits). Rows (inner == 1) have no adjacent outputs to load.
    if constexpr (VEC > 1) {
      if (inner > 1) {
        column_tiles<T, Op, BS, BS, UNROLL, VEC, 1>(in, out, outer, r, inner, partials);
        return;
      }
    }
    rows_by_lanes<T, Op, BS, 1, UNROLL, 1>(in, out, outer, r, inner);
  } else if constexpr (St == strategy::group) {
    static_assert(L >= 2 && L <= 16, "sub-warp groups have 2 to 16 lanes");
    rows_by_lanes<T, Op, BS, L, UNROLL, VEC>(in, out, outer, r, inner);
  } else if constexpr (St == strategy::warp) {
    static_assert(L == 32, "a warp per row has 32 lanes");
    rows_by_lanes<T, Op, BS, 32, UNROLL, VEC>(in, out, outer, r, inner);
  } else if constexpr (St == strategy::block || St == strategy::split) {
    static_assert(L == 1, "a block per row: lanes is not used");
    static_assert((St == strategy::split) == (S > 1), "split means more than one block per row");
    rows_by_blocks<T, Op, BS, UNROLL, VEC, S>(in, out, outer, r, inner, partials);
  } else if constexpr (St == strategy::staged) {
    static_assert(L == 1, "a thread per row of the staged tile: lanes is not used");
    staged<T, Op, BS, VEC, UNROLL>(in, out, outer, r, inner);
  } else {
    column_tiles<T, Op, BS, L, UNROLL, VEC, S>(in, out, outer, r, inner, partials);
  }
}

// Lanes of the finish per output: 32, or S for a split of fewer than 32 blocks, whose partials
// (at most S) a warp of 32 lanes would read with 32 - S lanes idle (tile split 4 over 32768
// columns at 2^28: 4096 blocks of 8 warps, 6.7 us on an H200, Nsight Compute). The bits are
// the same: with at most one partial a lane, the 32-lane tree's extra lanes hold the identity
// and meet the others only as the right operand, op(v, identity) == v for every operator
// (v is never -0.0 in a sum: its lane began with +0.0 + partial), so group_reduce<S> gives
// the 32-lane tree's value. measure/axis_launch.cpp sizes the finish's grid by the same rule
// (a mismatch would cost speed, never bits: the loop is grid-stride).
template <unsigned S> inline constexpr unsigned finish_lanes = S < 32 ? S : 32;

// Partials a lane of the finish loads before it combines any: every one it owns up to 16
// (ceil(S / 32): S <= 512 is one batch, 1024 two). Combined as loaded, lane by lane the
// partials were one dependent L2/DRAM round trip after another (acc = op(acc, partials[s]) in
// a loop bounded by r): Nsight Compute on an H200 gave 6-9 us for 4-32 blocks, 86 % of the
// stalls long_scoreboard (64 outputs x 512 partials: 9.0 us). Issued ahead, a batch is one
// round trip. At most 16: registers (16 doubles are 32 of them) for the 1024-way split.
template <unsigned S> inline constexpr unsigned finish_batch = S >= 16 * 32 ? 16 : (S + 31) / 32;

// What lane `lane`, one of L per output, combines of the output's `parts` partials
// (row[0, parts)): the identity, then s = lane, lane + L, ... in increasing s, as the finish
// always did.
// Each batch loads first and combines after; a missing element (s >= parts) is never
// combined, not even as the identity (x + 0.0 turns -0.0 into +0.0), so the bits are those of
// the plain loop.
template <class A, class Op, unsigned L, unsigned B>
__device__ __forceinline__ A finish_lane(const A *__restrict__ row, unsigned parts, unsigned lane) {
  const Op op{};
  A acc = Op::template identity<A>();
  for (unsigned first = lane; first < parts; first += L * B) {
    A v[B];
#pragma unroll
    for (unsigned b = 0; b < B; ++b)
      if (first + L * b < parts) v[b] = row[first + L * b];
#pragma unroll
    for (unsigned b = 0; b < B; ++b)
      if (first + L * b < parts) acc = op(acc, v[b]);
  }
  return acc;
}

// The deterministic finish of split > 1: 32 lanes per output (finish_lanes: S of them for a
// split of fewer). Lane l combines the output's non-empty partials (split_row(r, S).parts of
// them) s = l, l + 32, ... in order (finish_lane), then the lanes meet in a shuffle tree: the
// order depends on (r, S) alone (never atomics). An output's partials are adjacent
// (partials[j * parts + s]), so a warp reads them in one coalesced sweep even when S is in the
// hundreds and the outputs are few (a column reduction split over the whole GPU). Any grid
// and any block of whole warps is correct (the order is per group of lanes): the block size is
// the launcher's (measure/axis_launch.cpp, final_block_size), not a template argument, so that
// it is decided in one place.
template <class T, class Op, unsigned S>
__device__ __forceinline__ void finish(T *out, unsigned long long outer, unsigned long long r,
                                       unsigned long long inner,
                                       const acc_t<T> *__restrict__ partials) {
  constexpr unsigned L = finish_lanes<S>, per_warp = 32 / L;
  const unsigned long long outputs = outer * inner;
  const unsigned parts = static_cast<unsigned>(split_row(r, S).parts); // at most S
  const unsigned lane = threadIdx.x % 32, warps = blockDim.x / 32;
  // The loop bound is the warp's first output, so every lane of a warp runs the same
  // iterations: the shuffles need all 32.
  for (unsigned long long base =
           (static_cast<unsigned long long>(blockIdx.x) * warps + threadIdx.x / 32) * per_warp;
       base < outputs; base += static_cast<unsigned long long>(gridDim.x) * warps * per_warp) {
    const unsigned long long j = base + lane / L;
    acc_t<T> acc = finish_lane<acc_t<T>, Op, L, finish_batch<S>>(
        partials + (j < outputs ? j : 0) * parts, j < outputs ? parts : 0, lane % L);
    acc = group_reduce<acc_t<T>, Op, L>(acc);
    if (lane % L == 0 && j < outputs) out[j] = from_acc<T>(acc);
  }
}

template <class T, class Op, unsigned S>
__global__ void final_pass(const T *__restrict__ /*in*/, T *out, unsigned long long outer,
                           unsigned long long r, unsigned long long inner,
                           const acc_t<T> *__restrict__ partials) {
  // every point's program holds both roles, so split 1 compiles this too (never launched)
  static_assert(S >= 1 && (S & (S - 1)) == 0, "split is a power of two");
  finish<T, Op, S>(out, outer, r, inner, partials);
}

} // namespace axis
} // namespace rt
