// Thread level of the axis family: what one lane combines of one segment of a row, the row
// being the elements p[k * stride], k in [0, cnt) (stride = inner: 1 for a row reduction).
//
// L lanes share a segment: lane j takes the elements j, j + L, j + 2L, ... in increasing k,
// UNROLL loads issued before any is combined. The order in which a lane meets its elements is
// therefore a function of (cnt, L) alone, whatever UNROLL is.
//
// VEC > 1 (only where stride == 1) loads VEC adjacent elements at once. A vector load needs a
// VEC * sizeof(T)-aligned address, and a row of a (rows, r, 1) tensor starts wherever
// o * r * sizeof(T) puts it: elements before the first aligned one are a scalar head, those
// after the last whole vector a scalar tail. Which lane meets which element then depends on
// the row's address, not on r alone: such points are run_to_run but not batch_invariant
// (family.json says so through the `batch_invariant` let).
#pragma once

#include "axis/axis_acc.cuh"
#include "common/rt_ops.cuh"

namespace rt {
namespace axis {

template <class T, class Op, unsigned L, unsigned UNROLL>
__device__ __forceinline__ acc_t<T> lane_reduce_strided(const T *__restrict__ p,
                                                        unsigned long long cnt,
                                                        unsigned long long stride, unsigned lane) {
  const Op op{};
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  unsigned long long k = lane;
  for (; k + (UNROLL - 1) * L < cnt; k += UNROLL * L) {
    T x[UNROLL];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) x[u] = p[(k + u * L) * stride];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) acc = op(acc, to_acc(x[u]));
  }
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u)
    if (k + u * L < cnt) acc = op(acc, to_acc(p[(k + u * L) * stride]));
  return acc;
}

template <class T, class Op, unsigned L, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> lane_reduce_vector(const T *__restrict__ p,
                                                       unsigned long long cnt, unsigned lane) {
  const Op op{};
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(p) / sizeof(T)) % VEC;
  const unsigned long long head = min_u64((VEC - mis) % VEC, cnt);
  // Head and tail hold up to VEC - 1 elements each, which may be more than L lanes.
  for (unsigned long long k = lane; k < head; k += L) acc = op(acc, to_acc(p[k]));

  const T *aligned = p + head;
  const unsigned long long m = cnt - head, nvec = m / VEC;
  const vec<T, VEC> *pv = reinterpret_cast<const vec<T, VEC> *>(aligned);
  unsigned long long i = lane;
  for (; i + (UNROLL - 1) * L < nvec; i += UNROLL * L) {
    vec<T, VEC> x[UNROLL];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) x[u] = pv[i + u * L];
#pragma unroll
    for (unsigned u = 0; u < UNROLL; ++u) acc = fold<Op>(acc, x[u]);
  }
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u)
    if (i + u * L < nvec) {
      const vec<T, VEC> x = pv[i + u * L];
      acc = fold<Op>(acc, x);
    }
  for (unsigned long long k = nvec * VEC + lane; k < m; k += L) acc = op(acc, to_acc(aligned[k]));
  return acc;
}

// One lane's share of a short row, one that gives each lane at most one vector (at most one
// scalar where the row is strided or VEC == 1): cnt <= L * VEC where stride == 1, cnt <= L
// otherwise. Loading is apart from combining so that a warp can issue the loads of several
// rows before it combines any (rows_by_lanes' short rows). A misaligned row's head and tail
// hold up to VEC - 1 scalars each: the lane's first of each is loaded with its vector, any
// further one (only where L < VEC - 1) when combined. combine_short meets the elements in
// lane_reduce's order (head, the lane's vector, tail), so a row's bits do not depend on which
// path reduced it. Only the loaded values and which of them the lane holds (`pieces`) stay in
// registers between the two: UNROLL rows of row pointers and layouts pushed a 1024-thread
// block of 8 rows in flight to a stack frame.
template <class T, unsigned VEC> struct short_share {
  vec<T, VEC> body;
  T head0, tail0;
  unsigned pieces; // short_piece bits
};

enum short_piece : unsigned { head0_piece = 1, body_piece = 2, tail0_piece = 4, more_piece = 8 };

// Where lane_reduce_vector's pieces of a row lie: `head` scalars, `nvec` vectors, then the
// scalars of the tail up to `m` (counted from the first aligned element).
struct short_layout {
  unsigned head, nvec, m;
};

template <class T, unsigned VEC>
__device__ __forceinline__ short_layout layout_short(const T *p, unsigned long long cnt,
                                                     unsigned long long stride) {
  if (VEC == 1 || stride != 1) return {static_cast<unsigned>(cnt), 0, 0}; // all strided scalars
  const unsigned long long mis = (reinterpret_cast<unsigned long long>(p) / sizeof(T)) % VEC;
  const unsigned head = static_cast<unsigned>(min_u64((VEC - mis) % VEC, cnt));
  const unsigned m = static_cast<unsigned>(cnt) - head;
  return {head, m / VEC, m};
}

template <class T, unsigned L, unsigned VEC>
__device__ __forceinline__ short_share<T, VEC>
load_short(const T *__restrict__ p, unsigned long long cnt, unsigned long long stride,
           unsigned lane) {
  const short_layout s = layout_short<T, VEC>(p, cnt, stride);
  short_share<T, VEC> x;
  x.pieces = 0;
  if (lane < s.head) {
    x.head0 = p[lane * stride];
    x.pieces |= head0_piece;
  }
  if constexpr (VEC > 1) {
    const T *aligned = p + s.head;
    const unsigned k0 = s.nvec * VEC + lane;
    if (lane < s.nvec) {
      x.body = reinterpret_cast<const vec<T, VEC> *>(aligned)[lane];
      x.pieces |= body_piece;
    }
    if (k0 < s.m) {
      x.tail0 = aligned[k0];
      x.pieces |= tail0_piece;
    }
    if constexpr (L + 1 < VEC)
      if (lane + L < s.head || k0 + L < s.m) x.pieces |= more_piece;
  }
  return x;
}

// `row()` gives the row's first element again, asked for only where the lane has more than one
// head or tail scalar.
template <class T, class Op, unsigned L, unsigned VEC, class Row>
__device__ __forceinline__ acc_t<T> combine_short(const short_share<T, VEC> &x, Row row,
                                                  unsigned long long cnt, unsigned lane) {
  const Op op{};
  constexpr bool more = VEC > 1 && L + 1 < VEC;
  constexpr unsigned scalars = (VEC - 1 + L - 1) / L; // at most, of a head or a tail, per lane
  acc_t<T> acc = Op::template identity<acc_t<T>>();
  if (x.pieces & head0_piece) acc = op(acc, to_acc(x.head0));
  if constexpr (more) {
    if (x.pieces & more_piece) {
      const T *p = row();
      const short_layout s = layout_short<T, VEC>(p, cnt, 1);
#pragma unroll
      for (unsigned t = 1; t < scalars; ++t)
        if (lane + t * L < s.head) acc = op(acc, to_acc(p[lane + t * L]));
    }
  }
  if constexpr (VEC > 1) {
    if (x.pieces & body_piece) acc = fold<Op>(acc, x.body);
    if (x.pieces & tail0_piece) acc = op(acc, to_acc(x.tail0));
  }
  if constexpr (more) {
    if (x.pieces & more_piece) {
      const T *p = row();
      const short_layout s = layout_short<T, VEC>(p, cnt, 1);
#pragma unroll
      for (unsigned t = 1; t < scalars; ++t)
        if (s.nvec * VEC + lane + t * L < s.m)
          acc = op(acc, to_acc(p[s.head + s.nvec * VEC + lane + t * L]));
    }
  }
  return acc;
}

// One lane's share of a segment; the vector form only where the elements are adjacent.
template <class T, class Op, unsigned L, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ acc_t<T> lane_reduce(const T *__restrict__ p, unsigned long long cnt,
                                                unsigned long long stride, unsigned lane) {
  static_assert(UNROLL >= 1 && (UNROLL & (UNROLL - 1)) == 0, "unroll is a power of two");
  static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "vec is 1, 2, 4 or 8 elements");
  static_assert(VEC * sizeof(T) <= 16, "a vector load is at most 16 bytes");
  if constexpr (VEC > 1) {
    if (stride == 1) return lane_reduce_vector<T, Op, L, UNROLL, VEC>(p, cnt, lane);
  }
  return lane_reduce_strided<T, Op, L, UNROLL>(p, cnt, stride, lane);
}

} // namespace axis
} // namespace rt
