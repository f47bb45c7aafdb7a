// Element-type traits for the reduction templates (compiled only by NVRTC: no system headers
// but the toolkit's cuda_fp16.h and cuda_bf16.h, below).
//
// lowest()/highest() are the identities of max/min. For floating types they are -inf/+inf,
// not -FLT_MAX/FLT_MAX, so that a min over an input holding +inf (or a max over -inf) is
// still exact.
//
// accumulator<T>: the type a reduction of T combines in, and its two conversions (an element
// into it, a result out of it). Every partial (a thread's, a warp's, a block's, the partials
// in global memory) is an accumulator, never a T: the half types accumulate in float32 and
// never keep a partial in 16 bits (DESIGN.md). For int, long long, float and double it is T
// and both conversions are the identity, so their kernels are the same code as before.
#pragma once

// The half types come from the toolkit's headers, which NVRTC finds only through an include
// path: the jit layer passes it, with RT_HALF_TYPES, to the compiles of half-type variants
// alone (jit/variant_request.cpp), so that the other types' compiles neither parse the
// headers (thousands of lines) nor change their cache keys.
#if defined(RT_HALF_TYPES)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace rt {

template <class T> struct type_traits; // only the element types of the search space

template <> struct type_traits<int> {
  static constexpr bool is_integer = true;
  static __device__ __forceinline__ int lowest() { return -2147483647 - 1; }
  static __device__ __forceinline__ int highest() { return 2147483647; }
};

template <> struct type_traits<long long> {
  static constexpr bool is_integer = true;
  static __device__ __forceinline__ long long lowest() { return -9223372036854775807LL - 1; }
  static __device__ __forceinline__ long long highest() { return 9223372036854775807LL; }
};

template <> struct type_traits<float> {
  static constexpr bool is_integer = false;
  static __device__ __forceinline__ float lowest() { return __int_as_float(0xff800000); }
  static __device__ __forceinline__ float highest() { return __int_as_float(0x7f800000); }
};

template <> struct type_traits<double> {
  static constexpr bool is_integer = false;
  static __device__ __forceinline__ double lowest() {
    return __longlong_as_double(static_cast<long long>(0xfff0000000000000ULL));
  }
  static __device__ __forceinline__ double highest() {
    return __longlong_as_double(0x7ff0000000000000LL);
  }
};

#if defined(RT_HALF_TYPES)
// The half types reduce in float32 (accumulator below); these identities serve only the
// atomic protocol's init kernel, which every tunable program holds but a half type never
// launches (family.json refuses the atomic finish for it).
template <> struct type_traits<__half> {
  static constexpr bool is_integer = false;
  static __device__ __forceinline__ __half lowest() { return __ushort_as_half(0xfc00); }
  static __device__ __forceinline__ __half highest() { return __ushort_as_half(0x7c00); }
};

template <> struct type_traits<__nv_bfloat16> {
  static constexpr bool is_integer = false;
  static __device__ __forceinline__ __nv_bfloat16 lowest() { return __ushort_as_bfloat16(0xff80); }
  static __device__ __forceinline__ __nv_bfloat16 highest() { return __ushort_as_bfloat16(0x7f80); }
};
#endif

template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };

template <class T> struct accumulator {
  using type = T;
  static __device__ __forceinline__ type from(T x) { return x; }
  static __device__ __forceinline__ T to(type a) { return a; }
};

#if defined(RT_HALF_TYPES)
// Round to nearest even on the way out (the result is rounded once, from float32).
template <> struct accumulator<__half> {
  using type = float;
  static __device__ __forceinline__ float from(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half to(float a) { return __float2half_rn(a); }
};

template <> struct accumulator<__nv_bfloat16> {
  using type = float;
  static __device__ __forceinline__ float from(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 to(float a) { return __float2bfloat16_rn(a); }
};
#endif

template <class T> using acc_t = typename accumulator<T>::type;

template <class T> __device__ __forceinline__ acc_t<T> to_acc(T x) {
  return accumulator<T>::from(x);
}

// The result as the caller's output type Out: T by default, or float32 for a half type when
// the caller asks for it (then no rounding to 16 bits at all).
template <class T, class Out = T> __device__ __forceinline__ Out from_acc(acc_t<T> a) {
  static_assert(is_same<Out, T>::value || is_same<Out, acc_t<T>>::value,
                "the output type is the element type or its accumulator");
  if constexpr (is_same<Out, T>::value)
    return accumulator<T>::to(a);
  else
    return a;
}

// V elements of T loaded or stored as one access (ld.global.v2/.v4). The alignment is what
// makes the compiler emit a single vector instruction.
template <class T, int V> struct alignas(sizeof(T) * V) vec {
  T v[V];
};

// acc combined with x's V elements in order (e = 0, 1, ...), each taken to the accumulator
// type first: every family's step over one loaded vector, so that the order a kernel's bits
// depend on is written once. x is a vector already loaded (a register copy, never pv[i] itself,
// which would read the vector element by element).
template <class Op, class T, int V>
__device__ __forceinline__ acc_t<T> fold(acc_t<T> acc, const vec<T, V> &x) {
  const Op op{};
#pragma unroll
  for (int e = 0; e < V; ++e) acc = op(acc, to_acc(x.v[e]));
  return acc;
}

// Dynamic shared memory as T*. One byte array for every instantiation: `extern __shared__ T s[]`
// in a template conflicts as soon as two element types meet in one program.
template <class T> __device__ __forceinline__ T *dynamic_smem() {
  extern __shared__ __align__(16) unsigned char rt_dynamic_smem[];
  return reinterpret_cast<T *>(rt_dynamic_smem);
}

} // namespace rt
