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
// asked for 32 GiB of which 16 / 512 was ever written. tile_ticket finishes in the pass (no
// final_pass launch) and keeps one counter per (o, tile) after the partials (axis_finish.cuh,
// tile_counters).
#pragma once

#include "axis/axis_rows.cuh"
#include "axis/axis_staged.cuh"
#include "axis/axis_tile.cuh"

namespace rt {
namespace axis {

// What cooperates on one output (family.json's `strategy`).
// tile_ticket last: a value's place in family.json's list and here keeps the others' meaning.
enum class strategy { thread, group, warp, block, split, tile, staged, tile_ticket };

template <class T, class Op, strategy St, unsigned BS, unsigned L, unsigned VEC, unsigned UNROLL,
          unsigned S>
__global__ void __launch_bounds__(BS)
    pass(const T *__restrict__ in, T *out, unsigned long long outer, unsigned long long r,
         unsigned long long inner, acc_t<T> *partials) {
  static_assert(BS >= 32 && BS <= 1024 && (BS & (BS - 1)) == 0,
                "block size is a power of two in [32, 1024]");
  static_assert(S >= 1 && (S & (S - 1)) == 0, "split is a power of two");
  static_assert(S == 1 || St == strategy::split || St == strategy::tile ||
                    St == strategy::tile_ticket,
                "only split and the column tiles divide r across blocks");
  // A split finished by final_pass (tile_ticket finishes itself): let the finish launch now,
  // at the block's start (axis_finish.cuh, let_finish_launch); it waits for this whole grid.
  if constexpr (S > 1 && St != strategy::tile_ticket) let_finish_launch();
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
  } else if constexpr (St == strategy::tile_ticket) {
    // split 1 would be the tile strategy itself (family.json refuses it)
    static_assert(S > 1, "tile_ticket finishes a split of r: at least 2 blocks per output");
    column_tiles<T, Op, BS, L, UNROLL, VEC, S, true>(in, out, outer, r, inner, partials);
  } else {
    column_tiles<T, Op, BS, L, UNROLL, VEC, S>(in, out, outer, r, inner, partials);
  }
}

template <class T, class Op, unsigned S>
__global__ void final_pass(const T *__restrict__ /*in*/, T *out, unsigned long long outer,
                           unsigned long long r, unsigned long long inner,
                           const acc_t<T> *__restrict__ partials) {
  // every point's program holds both roles, so split 1 compiles this too (never launched)
  static_assert(S >= 1 && (S & (S - 1)) == 0, "split is a power of two");
  wait_for_pass(); // launched programmatically on sm_90 on: the pass may still run
  // Any grid and any block of whole warps is correct (the order is per group of lanes): the
  // block size is the launcher's (measure/axis_launch.cpp, final_block_size), not a template
  // argument, so that it is decided in one place.
  const unsigned warps = blockDim.x / 32;
  finish_outputs<T, Op, S>(out, partials, 0, outer * inner,
                           static_cast<unsigned>(split_row(r, S).parts), // at most S
                           static_cast<unsigned long long>(blockIdx.x) * warps + threadIdx.x / 32,
                           static_cast<unsigned long long>(gridDim.x) * warps);
}

} // namespace axis
} // namespace rt
