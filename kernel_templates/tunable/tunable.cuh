// The tunable family: one grid-stride pass kernel whose every choice is a template parameter
// (docs/architecture.md, "Template family declaration"; parameters declared in family.json).
//
//   thread   each thread combines its elements in acc_t<T> (T itself, float32 for the half
//            types, which never keep a partial in 16 bits): UNROLL independent loads of VEC elements
//            are issued before any is combined (loads in flight per loop step), over a
//            grid-stride loop, so any grid size is correct (the grid comes from the launch
//            config: elements per thread and grid cap). Where the grid holds at most one tile
//            per thread (aligned, n a multiple of VEC), a straight path with the same order.
//   block    rt::block_reduce (tree | warp_partials) with the chosen warp strategy.
//   grid     rt::finish_block (two_pass | atomic | ticket).
//
// Vector loads need VEC * sizeof(T)-aligned addresses: elements before the first aligned one
// (a misaligned `in`) are a scalar head, elements after the last whole vector a scalar tail.
#pragma once

#include "common/rt_grid.cuh"

namespace rt {
namespace tunable {

// The grid-stride loop: combines the elements of [in, in + n) owned by this thread under a
// grid of gridDim.x blocks, any n, any alignment.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> strided_reduce(const T *__restrict__ in,
                                                    unsigned long long n) {
  const Op op{};
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  const unsigned long long gtid = static_cast<unsigned long long>(blockIdx.x) * BS + threadIdx.x;

  // Scalar head up to the first VEC-aligned element (at most VEC - 1 elements).
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(in) / sizeof(T)) % VEC;
  unsigned long long head = (VEC - mis) % VEC;
  if (head > n) head = n;
  if (gtid < head) acc = op(acc, to_acc(in[gtid]));

  const T *aligned = in + head;
  const unsigned long long m = n - head;
  const unsigned long long nvec = m / VEC;
  const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(aligned);

  // Block tiles of BS * UNROLL vectors; thread t of a tile loads vectors t, t + BS, ...
  // (coalesced across the block for every k).
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * BS * UNROLL;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * BS * UNROLL + threadIdx.x;
  for (; i + (UNROLL - 1) * BS < nvec; i += stride) {
    vec<T, VEC> x[UNROLL];
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k) x[k] = pv[i + k * BS];
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k) acc = fold<Op>(acc, x[k]);
  }
  // At most one tile of the whole grid is partial; its owner finishes it with bound checks.
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k) {
    if (i + k * BS < nvec) {
      const vec<T, VEC> x = pv[i + k * BS];
      acc = fold<Op>(acc, x);
    }
  }

  // Scalar tail after the last whole vector (at most VEC - 1 elements).
  const unsigned long long tail = m - nvec * VEC;
  if (gtid < tail) acc = op(acc, to_acc(aligned[nvec * VEC + gtid]));
  return acc;
}

// The same elements where the grid holds at most one tile per thread, `in` starts on a vector
// and n is a multiple of VEC (one_tile_fits): no head, no tail, no loop, 32-bit indices. A
// whole tile's UNROLL loads go out at once and unpredicated, straight after the index; the
// loop spent its prologue and its per-load bounds before them, which a single block at 2^12
// waits through: 0.1-0.13 us of CUB's 3.8-3.9 in the tuner's cold, graph-replayed protocol,
// the per-load bounds alone 0.05-0.08 (H200, docs/results/h200_2026-11-27_z_small_pass_probe).
// The vectors are combined in the loop's order (k, then e), so the bits are the loop's.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> one_tile_reduce(const T *__restrict__ in, unsigned n) {
  const unsigned nvec = n / VEC, i = blockIdx.x * BS * UNROLL + threadIdx.x;
  const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(in);
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  vec<T, VEC> x[UNROLL];
  if (i + (UNROLL - 1) * BS < nvec) { // the whole tile: every load at once, none bounded
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k) x[k] = pv[i + k * BS];
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k) acc = fold<Op>(acc, x[k]);
  } else { // the grid's one partial tile, or none of it
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k)
      if (i + k * BS < nvec) x[k] = pv[i + k * BS];
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k)
      if (i + k * BS < nvec) acc = fold<Op>(acc, x[k]);
  }
  return acc;
}

// Whether one_tile_reduce serves this launch (the same answer in every thread): the grid's
// tiles cover n (elements_per_thread at most unroll * vec, or a grid capped above what n
// needs: one block at 2^12), their vectors fit 32-bit indices, and there is no head or tail.
// RT_TUNABLE_LOOP_ONLY (a test's compile option, never the tuner's) sends every launch through
// the loop, so that gpu_test_one_tile_bits can compare the two paths' bits on one grid.
template <class T, unsigned BS, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ bool one_tile_fits(const T *in, unsigned long long n) {
#if defined(RT_TUNABLE_LOOP_ONLY)
  return false;
#endif
  const unsigned long long grid_elements =
      static_cast<unsigned long long>(gridDim.x) * BS * UNROLL * VEC;
  return n <= grid_elements && grid_elements <= 0x7fffffffULL && n % VEC == 0 &&
         reinterpret_cast<unsigned long long>(in) % (VEC * sizeof(T)) == 0;
}

// Combines the elements of [in, in + n) owned by this thread under a grid of gridDim.x blocks.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> thread_reduce(const T *__restrict__ in,
                                                   unsigned long long n) {
  if (one_tile_fits<T, BS, UNROLL, VEC>(in, n))
    return one_tile_reduce<T, Op, BS, UNROLL, VEC>(in, static_cast<unsigned>(n));
  return strided_reduce<T, Op, BS, UNROLL, VEC>(in, n);
}

// The pass of a block, with the result written as Out (T, or float32 for a half type when
// the caller asks) and partials as accumulators (float32 for the half types).
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC, warp_strategy W,
          block_strategy B, finish F, class Out>
__device__ __forceinline__ void pass_block(const T *__restrict__ in, Out *out,
                                           unsigned long long n, acc_t<T> *partials,
                                           unsigned int *ticket) {
  static_assert(UNROLL >= 1 && (UNROLL & (UNROLL - 1)) == 0, "unroll is a power of two");
  static_assert(VEC == 1 || VEC == 2 || VEC == 4, "vec is 1, 2 or 4 elements");
  static_assert(VEC * sizeof(T) <= 16, "a vector load is at most 16 bytes");
  using A = acc_t<T>;
  __shared__ A s[block_reduce_slots<BS, W, B>()];
  const A acc = thread_reduce<T, Op, BS, UNROLL, VEC>(in, n);
  const A r = block_reduce<A, Op, BS, W, B>(acc, s);
  finish_block<T, Op, BS, W, B, F, Out>(r, out, partials, ticket, s);
}

// The entry kernels keep the whole-array ABI's declared types (T *partials): their mangled
// names, stored in exports (tests/python/test_golden.py), stay those of every existing type.
// The partials buffer holds accumulators (the planner sizes it so: accumulator_bytes), which
// for int, long long, float and double are T itself.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC, warp_strategy W,
          block_strategy B, finish F>
__global__ void __launch_bounds__(BS)
    pass(const T *__restrict__ in, T *out, unsigned long long n, T *partials,
         unsigned int *ticket) {
  pass_block<T, Op, BS, UNROLL, VEC, W, B, F, T>(in, out, n,
                                                 reinterpret_cast<acc_t<T> *>(partials), ticket);
}

// The same pass writing a half type's result in float32 (Out = float), on the caller's request.
template <class T, class Op, unsigned BS, unsigned UNROLL, unsigned VEC, warp_strategy W,
          block_strategy B, finish F, class Out>
__global__ void __launch_bounds__(BS)
    pass_out(const T *__restrict__ in, Out *out, unsigned long long n, acc_t<T> *partials,
             unsigned int *ticket) {
  pass_block<T, Op, BS, UNROLL, VEC, W, B, F, Out>(in, out, n, partials, ticket);
}

// two_pass's second kernel: one block over the n partials of the first (in = partials, which
// hold accumulators; declared T * for the ABI, as pass's).
template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B>
__global__ void __launch_bounds__(BS) final_pass(const T *__restrict__ in, T *out,
                                                 unsigned long long n) {
  __shared__ acc_t<T> s[block_reduce_slots<BS, W, B>()];
  reduce_partials<T, Op, BS, W, B, false, T>(reinterpret_cast<const acc_t<T> *>(in), out, n, s);
}

template <class T, class Op, unsigned BS, warp_strategy W, block_strategy B, class Out>
__global__ void __launch_bounds__(BS) final_pass_out(const acc_t<T> *__restrict__ in, Out *out,
                                                     unsigned long long n) {
  __shared__ acc_t<T> s[block_reduce_slots<BS, W, B>()];
  reduce_partials<T, Op, BS, W, B, false, Out>(in, out, n, s);
}

} // namespace tunable
} // namespace rt
