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

// The deterministic finish of split > 1: a warp per output. Lane l combines the output's
// non-empty partials (split_row(r, S).parts of them) s = l, l + 32, ... in order, then the
// lanes meet in a shuffle tree: the order depends on (r, S) alone (never atomics). An
// output's partials are adjacent (partials[j * parts + s]), so a warp reads them in one coalesced
// sweep even when S is in the hundreds and the outputs are few (a column reduction split over
// the whole GPU). Any grid is correct; the launcher gives ceil_div(outer * inner, BS / 32).
template <class T, class Op, unsigned BS, unsigned S>
__global__ void __launch_bounds__(BS)
    final_pass(const T *__restrict__ /*in*/, T *out, unsigned long long outer, unsigned long long r,
               unsigned long long inner, const acc_t<T> *__restrict__ partials) {
  static_assert(BS % 32 == 0, "whole warps");
  const Op op{};
  const unsigned long long outputs = outer * inner, parts = split_row(r, S).parts;
  const unsigned lane = threadIdx.x % 32;
  for (unsigned long long j =
           static_cast<unsigned long long>(blockIdx.x) * (BS / 32) + threadIdx.x / 32;
       j < outputs; j += static_cast<unsigned long long>(gridDim.x) * (BS / 32)) {
    acc_t<T> acc = Op::template identity<acc_t<T>>();
    for (unsigned s = lane; s < parts; s += 32) acc = op(acc, partials[j * parts + s]);
    acc = group_reduce<acc_t<T>, Op, 32>(acc);
    if (lane == 0) out[j] = from_acc<T>(acc);
  }
}

} // namespace axis
} // namespace rt
