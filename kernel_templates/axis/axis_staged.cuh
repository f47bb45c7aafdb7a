// Short rows staged through shared memory (the staged strategy), for (rows, r, 1) with r of a
// few elements. A thread per row reading its r elements from global memory (the thread
// strategy) issues loads whose 32 lanes lie r * sizeof(T) bytes apart, and sub-warp groups
// read only a few elements per row per step: on an H200 both stayed at 52-54 % of the HBM
// peak for rows of 2 to 16 (docs/results/h200_2026-11-26_axis_first_look). Here a block
// copies a tile of whole rows, a contiguous run of elements, with VEC-wide loads in which
// every lane of a warp reads the next VEC * sizeof(T) bytes (each load instruction a
// contiguous 32 * VEC * sizeof(T) bytes), UNROLL of them in flight per thread, into shared
// memory; then thread t reduces the rows t, t + BS, ... of the tile from shared memory and
// writes their outputs (neighbouring threads, neighbouring outputs: coalesced stores).
//
// The tile holds capacity = BS * VEC * UNROLL elements: floor(capacity / r) rows. Its start
// lies wherever row0 * r * sizeof(T) puts it, so up to VEC - 1 elements before the first
// aligned vector are a scalar head and those after the last whole vector a scalar tail; no
// byte outside the rows is read. Every element is stored one by one at its place in the tile,
// so where the tile starts changes nothing but which thread copies what.
//
// Shared memory is padded by one element every staged_pad_every (32 elements; 16 of 8 bytes,
// i.e. 128 bytes): thread t reads element t * r + k of the tile, r elements apart, which
// without padding puts gcd(r, 32) threads of a warp in one bank for 4-byte types (16-way at
// r = 16). With it, counted for every r up to 32 and every tile offset: 4-byte reads take one
// wavefront for r a power of two (2 for r = 3), 8-byte reads the 2 a warp's 256 bytes need
// (up to 6 for r = 3), 2-byte reads 2; the copy's stores (a warp stores 32 elements VEC apart)
// at most twice the minimum.
//
// Order: a row's elements meet in k order, one thread, from the identity: the thread
// strategy's order, a function of r alone whatever VEC, UNROLL or the row's address
// (batch_invariant; both strategies give a row the same bits). Where staging does not fit
// (inner > 1, or rows longer than staged_max_r) the entry falls back to a thread per output:
// the same k order, so that a shape's bits do not depend on which side of the fallback it lies
// (a warp per row for long rows gave (1, 1000, 1) other bits than the same column beside six
// others, (1, 1000, 7): gpu_test_axis on an H100). Long rows are not staged's shapes: the
// tuner and the runtime's rule give them the warp, block and split strategies.
#pragma once

#include "axis/axis_rows.cuh"

namespace rt {
namespace axis {

// Rows longer than this are not staged (the fallback, a thread per output; the tuner gives long
// rows to the warp, block and split strategies): a tile of them would leave most threads idle
// while one sums a long row alone. family.json's grid stages the same rows through the staged
// value's let of this name; a compile given that let as RT_AXIS_FAMILY_STAGED_MAX_R checks
// that the two agree (test_axis_compile), since a grid sized for tiles over rows the kernel
// gives a thread each (or the other way round) would launch the wrong number of blocks.
constexpr unsigned long long staged_max_r = 32;
#if defined(RT_AXIS_FAMILY_STAGED_MAX_R)
static_assert(staged_max_r == RT_AXIS_FAMILY_STAGED_MAX_R,
              "family.json's staged_max_r let is the kernel's staged_max_r");
#endif

template <class T> __host__ __device__ constexpr unsigned staged_pad_every() {
  return sizeof(T) >= 8 ? 16 : 32;
}

template <class T, unsigned BS, unsigned VEC, unsigned UNROLL>
__host__ __device__ constexpr unsigned staged_capacity() {
  return BS * VEC * UNROLL;
}

// Slots of the padded tile: family.json's shared_bytes is this times sizeof(T).
template <class T, unsigned BS, unsigned VEC, unsigned UNROLL>
__host__ __device__ constexpr unsigned staged_slots() {
  return staged_capacity<T, BS, VEC, UNROLL>() +
         staged_capacity<T, BS, VEC, UNROLL>() / staged_pad_every<T>();
}

template <class T> __device__ __forceinline__ unsigned padded(unsigned w) {
  return w + w / staged_pad_every<T>();
}

// Copies the count (at most capacity) elements at p into the padded tile s.
template <class T, unsigned BS, unsigned VEC, unsigned UNROLL>
__device__ __forceinline__ void stage_tile(const T *__restrict__ p, unsigned count, T *s) {
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(p) / sizeof(T)) % VEC;
  const unsigned head = static_cast<unsigned>(min_u64((VEC - mis) % VEC, count));
  const unsigned nvec = (count - head) / VEC; // at most BS * UNROLL: one pass of loads
  const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(p + head);
  vec<T, VEC> x[UNROLL];
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u)
    if (threadIdx.x + u * BS < nvec) x[u] = pv[threadIdx.x + u * BS];
  if (threadIdx.x < head) s[padded<T>(threadIdx.x)] = p[threadIdx.x];
  const unsigned tail = head + nvec * VEC;
  if (threadIdx.x < count - tail) s[padded<T>(tail + threadIdx.x)] = p[tail + threadIdx.x];
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u) {
    const unsigned i = threadIdx.x + u * BS;
    if (i < nvec)
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) s[padded<T>(head + i * VEC + e)] = x[u].v[e];
  }
}

template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL>
__device__ __forceinline__ void staged_rows(const T *__restrict__ in, T *out,
                                            unsigned long long outer, unsigned r) {
  constexpr unsigned capacity = staged_capacity<T, BS, VEC, UNROLL>();
  static_assert(capacity >= staged_max_r, "a tile holds at least one row");
  static_assert(VEC - 1 <= BS, "one thread per element of a head or tail");
  __shared__ T s[staged_slots<T, BS, VEC, UNROLL>()];
  const Op op{};
  const unsigned rows_per_tile = capacity / r;
  for (unsigned long long row0 = static_cast<unsigned long long>(blockIdx.x) * rows_per_tile;
       row0 < outer; row0 += static_cast<unsigned long long>(gridDim.x) * rows_per_tile) {
    const unsigned rows = static_cast<unsigned>(min_u64(rows_per_tile, outer - row0));
    stage_tile<T, BS, VEC, UNROLL>(in + row0 * r, rows * r, s);
    __syncthreads();
    for (unsigned row = threadIdx.x; row < rows; row += BS) {
      acc_t<T> acc = Op::template identity<acc_t<T>>();
      for (unsigned k = 0, w = row * r; k < r; ++k, ++w) acc = op(acc, to_acc(s[padded<T>(w)]));
      out[row0 + row] = from_acc<T>(acc);
    }
    __syncthreads(); // every row is read before the next tile overwrites s
  }
}

template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL>
__device__ __forceinline__ void staged(const T *__restrict__ in, T *out, unsigned long long outer,
                                       unsigned long long r, unsigned long long inner) {
  // r = 0: no tile of whole rows; every output the identity
  if (inner > 1 || r > staged_max_r || r == 0)
    rows_by_lanes<T, Op, BS, 1, UNROLL, 1>(in, out, outer, r, inner);
  else
    staged_rows<T, Op, BS, VEC, UNROLL>(in, out, outer, static_cast<unsigned>(r));
}

} // namespace axis
} // namespace rt
