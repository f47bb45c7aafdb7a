// The axis family: reductions of the middle axis of a contiguous tensor viewed as
// (outer, r, inner) into (outer, inner) (DESIGN.md, "Problems and their shapes"). Layered as
// CUB is: lanes (axis_thread.cuh), groups and blocks (axis_rows.cuh, axis_tile.cuh), and
// these thin entries. Parameters are declared in family.json.
//
// Kernel ABI "axis" (docs/architecture.md): every entry takes
//     (const T *in, T *out, unsigned long long outer, unsigned long long r,
//      unsigned long long inner, acc_t<T> *partials)
// out holds outer * inner results, out[o * inner + i]. partials (split > 1 only) holds
// split * outer * inner accumulators, written by pass and read by final_pass.
#pragma once

#include "axis/axis_rows.cuh"
#include "axis/axis_tile.cuh"

namespace rt {
namespace axis {

// What cooperates on one output (family.json's `strategy`).
enum class strategy { thread, group, warp, block, split, tile };

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
    static_assert(L == 1 && VEC == 1, "a thread per output: one lane, scalar loads");
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
  } else {
    column_tiles<T, Op, BS, L, UNROLL, VEC, S>(in, out, outer, r, inner, partials);
  }
}

// The deterministic finish of split > 1: a thread per output combines its S partials in s
// order (never atomics, so the bits depend on the point and r alone). Launched after pass on
// the same stream over ceil_div(outer * inner, BS) blocks (any grid is correct).
template <class T, class Op, unsigned BS, unsigned S>
__global__ void __launch_bounds__(BS)
    final_pass(const T *__restrict__ /*in*/, T *out, unsigned long long outer,
               unsigned long long /*r*/, unsigned long long inner,
               const acc_t<T> *__restrict__ partials) {
  const Op op{};
  const unsigned long long outputs = outer * inner;
  for (unsigned long long j = static_cast<unsigned long long>(blockIdx.x) * BS + threadIdx.x;
       j < outputs; j += static_cast<unsigned long long>(gridDim.x) * BS) {
    acc_t<T> acc = partials[j];
    for (unsigned s = 1; s < S; ++s) acc = op(acc, partials[s * outputs + j]);
    out[j] = from_acc<T>(acc);
  }
}

} // namespace axis
} // namespace rt
