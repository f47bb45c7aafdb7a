// The axis family's accumulator: common/rt_types.cuh's rt::accumulator, shared with the
// whole-array families (float32 for the half types, T itself otherwise), and the helpers that
// divide a row among blocks.
//
// Every partial (a lane's, a group's, a block's, the split strategy's partials in global
// memory) is an accumulator, never a T: DESIGN.md asks that 16-bit types accumulate in float32
// and never keep a partial in 16 bits.
#pragma once

#include "common/rt_types.cuh"

namespace rt {
namespace axis {

using rt::acc_t;
using rt::accumulator;
using rt::from_acc;
using rt::to_acc;

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

// One vector load of V elements at p (aligned to sizeof(T) * V) through the read-only path
// (ld.global.nc): a kernel that stores with store_vec's inline asm loses it on every plain
// load, since the compiler cannot tell what the asm writes (PTX: ld.global.v2.f32 in the
// column tiles that store their outputs, ld.global.nc.v2.f32 in those that store partials).
template <class T, int V> __device__ __forceinline__ vec<T, V> load_vec_nc(const T *p) {
  constexpr unsigned bytes = sizeof(T) * V;
  vec<T, V> x;
  if constexpr (bytes == 16 && sizeof(T) == 8) {
    const ulonglong2 w = __ldg(reinterpret_cast<const ulonglong2 *>(p));
    memcpy(&x, &w, bytes);
  } else if constexpr (bytes == 16) {
    const uint4 w = __ldg(reinterpret_cast<const uint4 *>(p));
    memcpy(&x, &w, bytes);
  } else if constexpr (bytes == 8) {
    const uint2 w = __ldg(reinterpret_cast<const uint2 *>(p));
    memcpy(&x, &w, bytes);
  } else if constexpr (bytes == 4) {
    const unsigned w = __ldg(reinterpret_cast<const unsigned *>(p));
    memcpy(&x, &w, bytes);
  } else {
    static_assert(bytes == 2, "a 2- to 16-byte vector");
    const unsigned short w = __ldg(reinterpret_cast<const unsigned short *>(p));
    memcpy(&x, &w, bytes);
  }
  return x;
}

// One vector store of y at p (aligned to sizeof(T) * V), written in PTX. Assigning the vec
// struct, or a uint4 made of its bytes, came out as V (or 4) scalar stores (st.global.f32 four
// times for vec<float, 4>, st.global.u16 for bfloat16), which split every lane's write into
// pieces: a thread per output with vec 8 over 2 rows of 2^27 bfloat16 columns ran at 31 % of
// the H200's DRAM bandwidth with its L2 busy merging them (ncu: 78 % L2 hits on a pure stream).
template <class T, int V> __device__ __forceinline__ void store_vec(T *p, const vec<T, V> &y) {
  constexpr unsigned bytes = sizeof(T) * V;
  static_assert(bytes == 4 || bytes == 8 || bytes == 16, "a 4- to 16-byte vector");
  unsigned w[bytes / 4];
  memcpy(w, &y, bytes);
  if constexpr (bytes == 16)
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]),
                 "r"(w[2]), "r"(w[3])
                 : "memory");
  else if constexpr (bytes == 8)
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1]) : "memory");
  else
    asm volatile("st.global.b32 [%0], %1;" ::"l"(p), "r"(w[0]) : "memory");
}

// q = n / d and m = n % d for an index n of a 2-D grid of d columns. A 64-bit division costs
// tens of instructions: once per output of a thread per output over 2 rows of 2^27 columns it
// bounded the kernel (54 % of the peak on an H200, where the reduction itself is two loads and
// a store). d == 1 (the last axis: rows) and n < d (the first axis: columns) need none, and
// 32-bit operands take the hardware's shorter sequence.
__device__ __forceinline__ void div_mod(unsigned long long n, unsigned long long d,
                                        unsigned long long &q, unsigned long long &m) {
  if (d == 1) {
    q = n;
    m = 0;
  } else if (n < d) {
    q = 0;
    m = n;
  } else if ((n | d) >> 32 == 0) {
    const unsigned n32 = static_cast<unsigned>(n), d32 = static_cast<unsigned>(d);
    q = n32 / d32;
    m = n32 - static_cast<unsigned>(q) * d32;
  } else {
    q = n / d;
    m = n - q * d;
  }
}

} // namespace axis
} // namespace rt
