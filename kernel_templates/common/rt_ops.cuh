// Reduction operators and their atomic combine.
//
// Each operator is a stateless struct: identity<T>() and operator()(T, T). atomic(T*, T)
// combines a value into global memory for the `atomic` finish protocol: the hardware atomic
// where one exists for the type (atomicAdd on int, unsigned long long (int64 sum in two's
// complement), float, double; atomicMin/Max on int and long long), a compare-and-swap loop
// otherwise (min/max on float/double, every product).
#pragma once

#include "common/rt_types.cuh"

namespace rt {

namespace detail {

// Compare-and-swap loops on the bit pattern: the only portable way to combine a type or
// operator without a hardware atomic. `f` is the operator; the loop stops early when the
// stored value would not change (no write traffic for min/max once the extremum is in place).
template <class F> __device__ __forceinline__ void cas_combine(int *addr, int v, F f) {
  int old = *addr, assumed;
  do {
    assumed = old;
    const int next = f(assumed, v);
    if (next == assumed) return;
    old = atomicCAS(addr, assumed, next);
  } while (old != assumed);
}

template <class F> __device__ __forceinline__ void cas_combine(long long *addr, long long v, F f) {
  unsigned long long *a = reinterpret_cast<unsigned long long *>(addr);
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    const long long next = f(static_cast<long long>(assumed), v);
    if (next == static_cast<long long>(assumed)) return;
    old = atomicCAS(a, assumed, static_cast<unsigned long long>(next));
  } while (old != assumed);
}

template <class F> __device__ __forceinline__ void cas_combine(float *addr, float v, F f) {
  int *a = reinterpret_cast<int *>(addr);
  int old = *a, assumed;
  do {
    assumed = old;
    const int next = __float_as_int(f(__int_as_float(assumed), v));
    if (next == assumed) return; // compares bits: -0.0 vs 0.0 still writes, NaN stops
    old = atomicCAS(a, assumed, next);
  } while (old != assumed);
}

template <class F> __device__ __forceinline__ void cas_combine(double *addr, double v, F f) {
  unsigned long long *a = reinterpret_cast<unsigned long long *>(addr);
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    const unsigned long long next = static_cast<unsigned long long>(
        __double_as_longlong(f(__longlong_as_double(static_cast<long long>(assumed)), v)));
    if (next == assumed) return;
    old = atomicCAS(a, assumed, next);
  } while (old != assumed);
}

// atomicMin/atomicMax exist for int and long long; floating types take the CAS loop.
template <class T> __device__ __forceinline__ constexpr bool has_atomic_minmax() {
  return is_same<T, int>::value || is_same<T, long long>::value;
}

} // namespace detail

struct op_sum {
  template <class T> static __device__ __forceinline__ T identity() { return T(0); }
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }

  static __device__ __forceinline__ void atomic(int *p, int v) { atomicAdd(p, v); }
  static __device__ __forceinline__ void atomic(long long *p, long long v) {
    // Two's complement: unsigned addition gives the same bits as signed addition.
    atomicAdd(reinterpret_cast<unsigned long long *>(p), static_cast<unsigned long long>(v));
  }
  static __device__ __forceinline__ void atomic(float *p, float v) { atomicAdd(p, v); }
  static __device__ __forceinline__ void atomic(double *p, double v) { atomicAdd(p, v); }
};

struct op_prod {
  template <class T> static __device__ __forceinline__ T identity() { return T(1); }
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; }

  template <class T> static __device__ __forceinline__ void atomic(T *p, T v) {
    detail::cas_combine(p, v, op_prod{});
  }
};

struct op_min {
  template <class T> static __device__ __forceinline__ T identity() {
    return type_traits<T>::highest();
  }
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
    return b < a ? b : a;
  }

  template <class T> static __device__ __forceinline__ void atomic(T *p, T v) {
    if constexpr (detail::has_atomic_minmax<T>()) atomicMin(p, v);
    else detail::cas_combine(p, v, op_min{});
  }
};

struct op_max {
  template <class T> static __device__ __forceinline__ T identity() {
    return type_traits<T>::lowest();
  }
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }

  template <class T> static __device__ __forceinline__ void atomic(T *p, T v) {
    if constexpr (detail::has_atomic_minmax<T>()) atomicMax(p, v);
    else detail::cas_combine(p, v, op_max{});
  }
};

// The element at j of a segment of cnt elements, or the identity past its end: how every
// kernel generalises a seed that assumed n to be a multiple of its block.
template <class T, class Op>
__device__ __forceinline__ T load_or_identity(const T *p, unsigned long long j,
                                              unsigned long long cnt) {
  return j < cnt ? p[j] : Op::template identity<T>();
}

} // namespace rt
