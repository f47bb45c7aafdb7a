// The deterministic finish of a split (split > 1): each output's partials (split_row(r, S).parts
// of them, adjacent: partials[j * parts + s]) combined in an order fixed by (r, S). Two callers
// run the same per-output code (finish_outputs), hence the same bits:
//   final_pass (axis.cuh)  a second kernel over every output, after the pass;
//   tile_ticket            the last block to finish a column tile, in the pass itself
//                          (finish_tile_if_last below): one launch instead of two.
#pragma once

#include "axis/axis_rows.cuh"

namespace rt {
namespace axis {

// Lanes of the finish per output: 32, or S for a split of fewer than 32 blocks, whose partials
// (at most S) a warp of 32 lanes would read with 32 - S lanes idle (tile split 4 over 32768
// columns at 2^28: 4096 blocks of 8 warps, 6.7 us on an H200, Nsight Compute). The bits are
// the same: with at most one partial a lane, the 32-lane tree's extra lanes hold the identity
// and meet the others only as the right operand, op(v, identity) == v for every operator
// (v is never -0.0 in a sum: its lane began with +0.0 + partial), so group_reduce<S> gives
// the 32-lane tree's value. measure/axis_launch.cpp sizes the finish's grid by the same rule
// (a mismatch would cost speed, never bits: the loop is grid-stride).
template <unsigned S> inline constexpr unsigned finish_lanes = S < 32 ? S : 32;

// Programmatic dependent launch (sm_90 on): measure/axis_launch.cpp launches final_pass with
// programmatic stream serialization there, so that its launch and its blocks' start overlap
// the pass instead of following its last block (a split's finish cost 5-10 us a call behind
// the streaming kernel on an H200). Both instructions are no-ops where the launch did not ask
// for it (an older device, an application's cuLaunchKernel from an export, a test's own
// launch), so the bits never depend on the launch path; below sm_90 they are not emitted.
//
// The pass of a split lets its dependents launch at each block's start: the finish's grid is
// then launched once every pass block has started (the last wave is resident), and its
// blocks take the slots that pass blocks free, none a pass block still waits for.
__device__ __forceinline__ void let_finish_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The finish waits, before it reads any partial, until the pass has completed and its writes
// are visible to this grid (griddepcontrol.wait waits for the whole prerequisite grid, not for
// its trigger): the partials it combines are all the pass's. The memory clobber keeps the
// compiler from hoisting a load above it.
__device__ __forceinline__ void wait_for_pass() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Partials a lane of the finish loads before it combines any: every one it owns up to 16
// (ceil(S / 32): S <= 512 is one batch, 1024 two). Combined as loaded, lane by lane the
// partials were one dependent L2/DRAM round trip after another (acc = op(acc, partials[s]) in
// a loop bounded by r): Nsight Compute on an H200 gave 6-9 us for 4-32 blocks, 86 % of the
// stalls long_scoreboard (64 outputs x 512 partials: 9.0 us). Issued ahead, a batch is one
// round trip. At most 16: registers (16 doubles are 32 of them) for the 1024-way split.
template <unsigned S> inline constexpr unsigned finish_batch = S >= 16 * 32 ? 16 : (S + 31) / 32;

// One partial. FromL2: the partials were written by other blocks of this launch (tile_ticket),
// so they are loaded from L2 (ld.global.cg), never through the SM's non-coherent L1 path,
// which may hold a line read before the other blocks wrote it. The value is the same either
// way; only where it is read from differs.
template <bool FromL2, class A> __device__ __forceinline__ A load_partial(const A *p) {
  if constexpr (FromL2)
    return __ldcg(p);
  else
    return *p;
}

// What lane `lane`, one of L per output, combines of the output's `parts` partials
// (row[0, parts)): the identity, then s = lane, lane + L, ... in increasing s, as the finish
// always did.
// Each batch loads first and combines after; a missing element (s >= parts) is never
// combined, not even as the identity (x + 0.0 turns -0.0 into +0.0), so the bits are those of
// the plain loop.
template <class A, class Op, unsigned L, unsigned B, bool FromL2 = false>
__device__ __forceinline__ A finish_lane(const A *__restrict__ row, unsigned parts, unsigned lane) {
  const Op op{};
  A acc = Op::template identity<A>();
  for (unsigned first = lane; first < parts; first += L * B) {
    A v[B];
#pragma unroll
    for (unsigned b = 0; b < B; ++b)
      if (first + L * b < parts) v[b] = load_partial<FromL2>(row + first + L * b);
#pragma unroll
    for (unsigned b = 0; b < B; ++b)
      if (first + L * b < parts) acc = op(acc, v[b]);
  }
  return acc;
}

// Outputs [first, end) finished by warps `warp`, `warp` + `warps`, ... (each a group of whole
// warps' lanes: every lane of a warp calls this with the same arguments): 32 lanes per output
// (finish_lanes: S of them for a split of fewer, 32 / S outputs a warp). Lane l combines the
// output's `parts` partials s = l, l + 32, ... in order (finish_lane), then the lanes meet in a
// shuffle tree: the order depends on (r, S) alone (never atomics), not on which warp, block or
// caller finishes the output. An output's partials are adjacent, so a warp reads them in one
// coalesced sweep even when S is in the hundreds and the outputs are few.
template <class T, class Op, unsigned S, bool FromL2 = false>
__device__ __forceinline__ void finish_outputs(T *out, const acc_t<T> *__restrict__ partials,
                                               unsigned long long first, unsigned long long end,
                                               unsigned parts, unsigned long long warp,
                                               unsigned long long warps) {
  constexpr unsigned L = finish_lanes<S>, per_warp = 32 / L;
  const unsigned lane = threadIdx.x % 32;
  // The loop bound is the warp's first output, so every lane of a warp runs the same
  // iterations: the shuffles need all 32.
  for (unsigned long long base = first + warp * per_warp; base < end; base += warps * per_warp) {
    const unsigned long long j = base + lane / L;
    acc_t<T> acc = finish_lane<acc_t<T>, Op, L, finish_batch<S>, FromL2>(
        partials + (j < end ? j : first) * parts, j < end ? parts : 0, lane % L);
    acc = group_reduce<acc_t<T>, Op, L>(acc);
    if (lane % L == 0 && j < end) out[j] = from_acc<T>(acc);
  }
}

// tile_ticket's counters: one unsigned per (o, tile), after the `partials` accumulators of the
// pass, from the next multiple of 16 bytes (measure/axis_launch.cpp, axis_plan::counters_offset,
// sizes the scratch by the same rule). Zero before the first launch (the scratch's owner zeroes
// them once, at allocation) and zero again after every launch (the tile's last block resets its
// counter), so no call needs a memset, a graph replay included.
template <class A>
__device__ __forceinline__ unsigned *tile_counters(A *partials, unsigned long long count) {
  const unsigned long long bytes = (count * sizeof(A) + 15) / 16 * 16;
  return reinterpret_cast<unsigned *>(reinterpret_cast<char *>(partials) + bytes);
}

// Called by every thread of a block of tile_ticket after it wrote its partials of one tile
// (outputs [first, first + count)): the block takes a ticket from the tile's counter, and the
// block that arrives last (the parts-th) finishes the tile's outputs with finish_outputs, its
// warps as the finish's warps: the order per output is final_pass's, whichever block is last.
// The fence before the ticket makes this block's partials visible to the block that finishes
// (CUDA Programming Guide, memory fence functions: the last-block sum); the one after it keeps
// the finisher's loads behind the ticket. The verdict reaches the block through
// __syncthreads_or, not shared memory, so the tile strategy's shared_bytes stays exact.
template <class T, class Op, unsigned S>
__device__ __forceinline__ void finish_tile_if_last(T *out, const acc_t<T> *partials,
                                                    unsigned *counter, unsigned long long first,
                                                    unsigned long long count, unsigned parts) {
  __threadfence();
  __syncthreads(); // every thread's partials stored and fenced before the ticket
  bool last = false;
  if (threadIdx.x == 0) {
    last = atomicAdd(counter, 1u) == parts - 1;
    // Every block of the tile has its ticket: nobody else touches the counter in this launch,
    // and the next launch on the scratch (stream order) finds it zero.
    if (last) *counter = 0;
  }
  if (!__syncthreads_or(last)) return;
  __threadfence();
  // The tile's outputs counted from its first (the same addresses): with the 64-bit first and
  // end live instead, float64 min and max at block 512, lanes 128, vec 2 called the 64-bit
  // division of the tile's loop with a 16-byte stack frame (test_axis_compile).
  finish_outputs<T, Op, S, true>(out + first, partials + first * parts, 0, count, parts,
                                 threadIdx.x / 32, blockDim.x / 32);
}

} // namespace axis
} // namespace rt
