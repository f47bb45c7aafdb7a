// The axis family's accumulator trait: the type a reduction of T combines in, and the
// conversions at its two ends (the load of an element, the store of a result).
//
// Every partial (a lane's, a group's, a block's, the split strategy's partials in global
// memory) is an accumulator, never a T: DESIGN.md asks that 16-bit types accumulate in float32
// and never keep a partial in 16 bits. For today's element types (int, long long, float,
// double) the accumulator is T itself and both conversions are the identity. A half type
// plugs in by one specialisation here (accumulator<__half> { using type = float; ... }) and a
// type_traits<float> identity that already exists; no kernel changes.
#pragma once

#include "common/rt_types.cuh"

namespace rt {
namespace axis {

template <class T> struct accumulator {
  using type = T;
  static __device__ __forceinline__ type from(T x) { return x; }
  static __device__ __forceinline__ T to(type a) { return a; }
};

template <class T> using acc_t = typename accumulator<T>::type;

template <class T> __device__ __forceinline__ acc_t<T> to_acc(T x) {
  return accumulator<T>::from(x);
}

template <class T> __device__ __forceinline__ T from_acc(acc_t<T> a) {
  return accumulator<T>::to(a);
}

__host__ __device__ constexpr unsigned long long ceil_div(unsigned long long a,
                                                          unsigned long long b) {
  return (a + b - 1) / b;
}

__host__ __device__ constexpr unsigned long long min_u64(unsigned long long a,
                                                         unsigned long long b) {
  return a < b ? a : b;
}

// How split S divides a row of r elements: chunks of ceil(r / S) elements, of which `parts`
// (at most S) are not empty. Both are functions of (r, S) alone, so the reduction order is
// too; blocks and partials are spent only on the non-empty chunks (r = 4 with S = 512 has 4).
struct row_split {
  unsigned long long chunk, parts;
};

__host__ __device__ constexpr row_split split_row(unsigned long long r, unsigned long long s) {
  return {ceil_div(r, s), ceil_div(r, ceil_div(r, s))};
}

} // namespace axis
} // namespace rt
