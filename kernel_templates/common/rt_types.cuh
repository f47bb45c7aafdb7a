// Element-type traits for the reduction templates (compiled only by NVRTC: no system headers).
//
// lowest()/highest() are the identities of max/min. For floating types they are -inf/+inf,
// not -FLT_MAX/FLT_MAX, so that a min over an input holding +inf (or a max over -inf) is
// still exact.
#pragma once

namespace rt {

template <class T> struct type_traits; // only the four element types of the search space

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

template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };

// V elements of T loaded or stored as one access (ld.global.v2/.v4). The alignment is what
// makes the compiler emit a single vector instruction.
template <class T, int V> struct alignas(sizeof(T) * V) vec {
  T v[V];
};

// Dynamic shared memory as T*. One byte array for every instantiation: `extern __shared__ T s[]`
// in a template conflicts as soon as two element types meet in one program.
template <class T> __device__ __forceinline__ T *dynamic_smem() {
  extern __shared__ __align__(16) unsigned char rt_dynamic_smem[];
  return reinterpret_cast<T *>(rt_dynamic_smem);
}

} // namespace rt
