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
    for (unsigned u = 0; u < UNROLL; ++u)
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) acc = op(acc, to_acc(x[u].v[e]));
  }
#pragma unroll
  for (unsigned u = 0; u < UNROLL; ++u)
    if (i + u * L < nvec) {
      const vec<T, VEC> x = pv[i + u * L];
#pragma unroll
      for (unsigned e = 0; e < VEC; ++e) acc = op(acc, to_acc(x.v[e]));
    }
  for (unsigned long long k = nvec * VEC + lane; k < m; k += L) acc = op(acc, to_acc(aligned[k]));
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
