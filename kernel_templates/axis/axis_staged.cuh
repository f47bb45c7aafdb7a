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
// Two register paths take the same tiles where the input lies on a vector boundary and a row
// is a whole number of vectors or a vector a whole number of rows, with the same loads and no
// shared memory: r dividing VEC (staged_rows_in_vectors: a vector holds VEC / r rows) and
// r = 2 * VEC or 4 * VEC (staged_rows_of_vectors: 2 or 4 lanes hold a row and hand it to one
// of them with shuffles). Other r, and misaligned inputs, stage through shared memory.
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

// Rows of up to this many whole vectors (r = 2 * vec or 4 * vec, at most staged_max_r) skip
// shared memory (staged_rows_of_vectors): a group of M lanes transposes its M loads, log2(M)
// shuffle steps, whose selects grow as M log2(M) per row.
constexpr unsigned staged_max_vectors = 4;

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

// The per = VEC / R adjacent outputs of one vector's rows, in one store where out allows it.
// A plain store of the vec type, not store_vec: here it comes out as one st.global.v4.u16 (8
// bytes of bfloat16), .v2.u16 or .v4.u32 (PTX, sm_90), while store_vec's inline asm would cost
// every load of the kernel the read-only path (ld.global.v4.u32 instead of ld.global.nc.v4.u32:
// the compiler cannot tell what an asm statement writes).
template <class T, unsigned per>
__device__ __forceinline__ void store_outputs(T *o, const vec<T, per> &y, bool aligned) {
  if (aligned) {
    *reinterpret_cast<vec<T, per> *>(o) = y;
    return;
  }
#pragma unroll
  for (unsigned q = 0; q < per; ++q) o[q] = y.v[q];
}

// Rows of R elements, R dividing VEC, of an input aligned to a vector: every vector of a tile
// holds per = VEC / R whole rows, so thread t reduces them from its registers, no shared
// memory, and stores their per adjacent outputs at once. Through shared memory a bfloat16 row
// of 2 cost two scalar shared accesses per element (PTX: 34 st.shared.u16 per thread and tile
// at vec 8) and a 2-byte store per output, 64 bytes per warp instruction (57.6 % of the
// H200's peak at (2^27, 2)); here a warp stores 256 contiguous bytes of them at once. The same
// tiles and grid as staged_rows, and each row still meets its elements in k order from the
// identity in one thread: the same bits.
template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL, unsigned R>
__device__ __forceinline__ void staged_rows_in_vectors(const T *__restrict__ in, T *out,
                                                       unsigned long long outer) {
  constexpr unsigned per = VEC / R;
  constexpr unsigned rows_per_tile = staged_capacity<T, BS, VEC, UNROLL>() / R; // BS * UNROLL * per
  const Op op{};
  const bool out_aligned = reinterpret_cast<unsigned long long>(out) % (sizeof(T) * per) == 0;
  for (unsigned long long row0 = static_cast<unsigned long long>(blockIdx.x) * rows_per_tile;
       row0 < outer; row0 += static_cast<unsigned long long>(gridDim.x) * rows_per_tile) {
    const unsigned rows = static_cast<unsigned>(min_u64(rows_per_tile, outer - row0));
    const unsigned nvec = rows / per; // row0 is a multiple of per: whole vectors from here
    const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(in + row0 * R);
    vec<T, VEC> x[UNROLL];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u)
      if (threadIdx.x + u * BS < nvec) x[u] = pv[threadIdx.x + u * BS];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) {
      const unsigned i = threadIdx.x + u * BS;
      if (i >= nvec) continue;
      vec<T, per> y;
#pragma unroll
      for (unsigned q = 0; q < per; ++q) {
        acc_t<T> acc = Op::template identity<acc_t<T>>();
#pragma unroll
        for (unsigned k = 0; k < R; ++k) acc = op(acc, to_acc(x[u].v[q * R + k]));
        y.v[q] = from_acc<T>(acc);
      }
      store_outputs<T, per>(out + row0 + i * per, y, out_aligned);
    }
    // The last tile's rows after its last whole vector (fewer than per), one thread each.
    if (threadIdx.x < rows - nvec * per) {
      const unsigned long long row = row0 + nvec * per + threadIdx.x;
      acc_t<T> acc = Op::template identity<acc_t<T>>();
#pragma unroll
      for (unsigned k = 0; k < R; ++k) acc = op(acc, to_acc(in[row * R + k]));
      out[row] = from_acc<T>(acc);
    }
  }
}

// 32-bit words of one vector (a 2-byte vector in the low half of one), for __shfl_xor_sync.
template <class T, unsigned VEC> inline constexpr unsigned vec_words = (sizeof(T) * VEC + 3) / 4;

// The M x M transpose of a group of M lanes: lane part p's y[u] (part p of the block's row u)
// becomes part u of row p. Step s swaps, between lanes p and p ^ s, the registers j whose bit s
// differs from p's (the bit s of lane and register flip together: after the log2(M) steps part
// c of row u has gone from lane c, register u to lane u, register c). M / 2 shuffles of W words
// a step: at M = 4, 16 shuffles and 48 selects a row, against 12 and 96 for M - 1 direct
// exchanges whose run-time register index costs M-way selects on both sides.
template <unsigned M, unsigned W>
__device__ __forceinline__ void transpose_parts(unsigned (&y)[M][W], unsigned p) {
#pragma unroll
  for (unsigned s = M / 2; s > 0; s /= 2) {
    const bool high = (p & s) != 0;
#pragma unroll
    for (unsigned j = 0; j < M; ++j) {
      if (j & s) continue;
#pragma unroll
      for (unsigned w = 0; w < W; ++w) {
        const unsigned got = __shfl_xor_sync(full_mask, high ? y[j][w] : y[j ^ s][w], s);
        if (high)
          y[j][w] = got;
        else
          y[j ^ s][w] = got;
      }
    }
  }
}

// Rows of M whole vectors (r = M * VEC, M = 2 or 4: bfloat16 and float16 rows of 16 and 32 at
// vec 8, float32 rows of 8 and 16 at vec 4) of an input aligned to a vector: each thread owns
// whole rows and sums them from registers, no shared memory. Through shared memory a bfloat16
// row of 16 cost 8 st.shared.u16 per vector and 16 ld.shared.u16 per row, 2-byte accesses at
// up to 2 wavefronts each: the copy and the reads bound the kernel at 56-62 % of the H200's
// peak where float32 rows of 16 (4-byte accesses, half as many per byte) reached 85.6 %.
//
// Loads: each warp load is stage_tile's, 32 lanes reading 512 contiguous bytes (16-byte
// vectors), so lane l of load u holds part l % M of a row that M neighbouring lanes share. A
// thread instead loading its own row's M vectors would have each warp instruction take 16
// bytes every M * 16 bytes: half of every 32-byte sector at M = 2, one sector in two at M = 4,
// the other halves M - 1 instructions later. That issues M times the sector requests for the
// same bytes and leaves merging them to L1 on a kernel that does nothing but stream. Instead
// the M lanes of a group trade parts with xor shuffles of the vectors' 32-bit words
// (transpose_parts): at M = 2, 4 shuffles and 12 selects per 32-byte row of bfloat16, against
// the 32 shared accesses above (PTX, sm_90).
//
// Layout: warp w takes the tile's vectors [w * 32 * UNROLL, (w + 1) * 32 * UNROLL), load u the
// 32 from w * 32 * UNROLL + 32 * u; the loads b * M + c (c < M) hold 32 consecutive rows, the
// b-th block of the warp's rows. Lane (g, p) = (l / M, l % M) holds part p of row
// u * 32 / M + g of the warp's, and after the transpose owns row (b * M + p) * 32 / M + g of
// block b: a warp's 32 rows of one block are 32 consecutive outputs, one coalesced store.
// UNROLL < M (fewer loads than a block takes): lanes p >= UNROLL own no row.
//
// Order: each row meets its elements in k order (part c's VEC elements, c = 0 .. M - 1) from
// the identity in one thread: staged_rows' and the thread strategy's bits (batch_invariant).
// The same tiles and grid as staged_rows; every row of the tile is whole, so no tail.
template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL, unsigned M>
__device__ __forceinline__ void staged_rows_of_vectors(const T *__restrict__ in, T *out,
                                                       unsigned long long outer) {
  constexpr unsigned R = M * VEC, W = vec_words<T, VEC>, bytes = sizeof(T) * VEC;
  constexpr unsigned rows_per_tile = staged_capacity<T, BS, VEC, UNROLL>() / R; // BS * UNROLL / M
  constexpr unsigned L = UNROLL < M ? UNROLL : M, blocks = (UNROLL + M - 1) / M;
  static_assert(BS % 32 == 0 && 32 % M == 0, "whole warps of whole groups of M lanes");
  const unsigned lane = threadIdx.x % 32, p = lane % M, g = lane / M;
  const unsigned first = threadIdx.x / 32 * 32 * UNROLL; // the warp's first vector of the tile
  for (unsigned long long row0 = static_cast<unsigned long long>(blockIdx.x) * rows_per_tile;
       row0 < outer; row0 += static_cast<unsigned long long>(gridDim.x) * rows_per_tile) {
    const unsigned rows = static_cast<unsigned>(min_u64(rows_per_tile, outer - row0));
    const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(in + row0 * R);
    unsigned x[UNROLL][W] = {}; // a vector past the tile's rows: zeros no owner reads
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u)
      if (first + u * 32 + lane < rows * M) {
        const vec<T, VEC> v = pv[first + u * 32 + lane];
        memcpy(x[u], &v, bytes);
      }
#pragma unroll
    for (unsigned b = 0; b < blocks; ++b) {
      unsigned y[M][W] = {}; // every lane shuffles (full_mask), owner or not
#pragma unroll
      for (unsigned u = 0; u < L; ++u)
#pragma unroll
        for (unsigned w = 0; w < W; ++w) y[u][w] = x[b * M + u][w];
      transpose_parts<M, W>(y, p);
      const unsigned row = first / M + (b * M + p) * (32 / M) + g;
      if (p >= L || row >= rows) continue;
      acc_t<T> acc = Op::template identity<acc_t<T>>();
#pragma unroll
      for (unsigned c = 0; c < M; ++c) {
        vec<T, VEC> part;
        memcpy(&part, y[c], bytes);
        acc = fold<Op>(acc, part);
      }
      out[row0 + row] = from_acc<T>(acc);
    }
  }
}

// Whether in lies on a vector boundary: every row of a whole number of vectors then does too.
template <class T, unsigned VEC> __device__ __forceinline__ bool vector_aligned(const T *in) {
  return reinterpret_cast<unsigned long long>(in) % (sizeof(T) * VEC) == 0;
}

// Takes the rows in vectors where r is R, R / 2, ..., 1 (the divisors of VEC) and the input
// lies on a vector boundary; false where another path must take the tile.
template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL, unsigned R = VEC>
__device__ __forceinline__ bool staged_in_vectors(const T *__restrict__ in, T *out,
                                                  unsigned long long outer, unsigned r) {
  if (r == R) {
    if (!vector_aligned<T, VEC>(in)) return false;
    staged_rows_in_vectors<T, Op, BS, VEC, UNROLL, R>(in, out, outer);
    return true;
  }
  if constexpr (R > 1) return staged_in_vectors<T, Op, BS, VEC, UNROLL, R / 2>(in, out, outer, r);
  return false;
}

// Takes the rows of M whole vectors where r is 2 * VEC or 4 * VEC (at most staged_max_r) and
// the input lies on a vector boundary; false where staged_rows must stage the tile.
template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL, unsigned M = 2>
__device__ __forceinline__ bool staged_of_vectors(const T *__restrict__ in, T *out,
                                                  unsigned long long outer, unsigned r) {
  if constexpr (M <= staged_max_vectors && M * VEC <= staged_max_r) {
    if (r == M * VEC) {
      if (!vector_aligned<T, VEC>(in)) return false;
      staged_rows_of_vectors<T, Op, BS, VEC, UNROLL, M>(in, out, outer);
      return true;
    }
    return staged_of_vectors<T, Op, BS, VEC, UNROLL, 2 * M>(in, out, outer, r);
  }
  return false;
}

template <class T, class Op, unsigned BS, unsigned VEC, unsigned UNROLL>
__device__ __forceinline__ void staged(const T *__restrict__ in, T *out, unsigned long long outer,
                                       unsigned long long r, unsigned long long inner) {
  // r = 0: no tile of whole rows; every output the identity
  if (inner > 1 || r > staged_max_r || r == 0)
    rows_by_lanes<T, Op, BS, 1, UNROLL, 1>(in, out, outer, r, inner);
  else if (!staged_in_vectors<T, Op, BS, VEC, UNROLL>(in, out, outer, static_cast<unsigned>(r)) &&
           !staged_of_vectors<T, Op, BS, VEC, UNROLL>(in, out, outer, static_cast<unsigned>(r)))
    staged_rows<T, Op, BS, VEC, UNROLL>(in, out, outer, static_cast<unsigned>(r));
}

} // namespace axis
} // namespace rt
