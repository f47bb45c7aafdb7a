// Mark Harris, "Optimizing Parallel Reduction in CUDA" (seed 000, the slides as taught by
// Jeong-Gun Lee; the same kernels in seed 001 and as reduce_0..reduce_5 in seed 002).
// harrisK is Harris's reduceK, i.e. the row "Kernel K+1" of 000's table "Performance for
// 4M element reduction" (2^22 ints, G80, block size 128), and row "reduce_K" of 002's table
// (2^20 floats, Quadro K3100M).
//
// Generalised, everything else kept (divergent %, bank conflicts, volatile last warp
// without __syncwarp, shared-memory accumulation in reduce6):
//   int -> T, `+` -> Op; the first-level sums read out-of-range elements as the identity,
//   so any n >= 1 works (Harris assumed n a multiple of the elements per block); global
//   indices are 64-bit; the completely unrolled steps start at 1024 (G80 stopped at 512).
// Shared memory is dynamic (Harris's `extern __shared__ int sdata[]`): block_size elements.
// Every kernel takes BlockSize so the family has one name-expression pattern; harris0..4 do
// not use it (they read blockDim.x, as the seed does).
#pragma once

#include "common/rt_warp.cuh"

namespace rt {
namespace seeds {

// Kernel 1 | 000: 8.054 ms, 2.083 GB/s | 002 reduce_0: 8.041 ms. Interleaved addressing with
// divergent branching: `tid % (2*s)` is slow and leaves most lanes of a warp idle.
template <class T, class Op, unsigned BlockSize>
__global__ void harris0(const T *g_idata, T *g_odata, unsigned long long n) {
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  sdata[tid] = load_or_identity<T, Op>(g_idata, i, n);
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 2 | 000: 3.456 ms, 4.854 GB/s | 002 reduce_1: 6.655 ms. Strided index, non-divergent
// branch, but 2-way and worse shared-memory bank conflicts (sdata[2*s*tid]).
template <class T, class Op, unsigned BlockSize>
__global__ void harris1(const T *g_idata, T *g_odata, unsigned long long n) {
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  sdata[tid] = load_or_identity<T, Op>(g_idata, i, n);
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    int index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] = op(sdata[index], sdata[index + s]);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 3 | 000: 1.722 ms, 9.741 GB/s | 002 reduce_2: 5.863 ms. Sequential addressing
// (reversed loop, threadID-based indexing): conflict-free, but half the threads idle at once.
template <class T, class Op, unsigned BlockSize>
__global__ void harris2(const T *g_idata, T *g_odata, unsigned long long n) {
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  sdata[tid] = load_or_identity<T, Op>(g_idata, i, n);
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// First add during global load: each block reduces 2 * blockDim.x elements.
template <class T, class Op>
__device__ __forceinline__ void harris_first_add(const T *g_idata, T *sdata, unsigned long long n) {
  const Op op{};
  unsigned int tid = threadIdx.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * (blockDim.x * 2) + tid;
  sdata[tid] = op(load_or_identity<T, Op>(g_idata, i, n),
                  load_or_identity<T, Op>(g_idata, i + blockDim.x, n));
  __syncthreads();
}

// Kernel 4 | 000: 0.965 ms, 17.377 GB/s | 002 reduce_3: 3.430 ms. First add during load.
template <class T, class Op, unsigned BlockSize>
__global__ void harris3(const T *g_idata, T *g_odata, unsigned long long n) {
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  harris_first_add<T, Op>(g_idata, sdata, n);
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 5 | 000: 0.536 ms, 31.289 GB/s | 002 reduce_4: 2.865 ms. Unroll the last warp:
// warpReduce on volatile shared memory with no __syncwarp() (racy on Volta+: flagged).
template <class T, class Op, unsigned BlockSize>
__global__ void harris4(const T *g_idata, T *g_odata, unsigned long long n) {
  static_assert(BlockSize >= 64, "warpReduce reads sdata[tid + 32]: at least 64 threads");
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  harris_first_add<T, Op>(g_idata, sdata, n);
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid < 32) warp_reduce_volatile_unsafe<T, Op, 64>(sdata, tid);
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// reduce5/reduce6's tree: completely unrolled on the template block size.
template <class T, class Op, unsigned blockSize>
__device__ __forceinline__ void harris_unrolled_tree(T *sdata, unsigned int tid) {
  const Op op{};
  if (blockSize >= 1024) { if (tid < 512) { sdata[tid] = op(sdata[tid], sdata[tid + 512]); } __syncthreads(); }
  if (blockSize >= 512) { if (tid < 256) { sdata[tid] = op(sdata[tid], sdata[tid + 256]); } __syncthreads(); }
  if (blockSize >= 256) { if (tid < 128) { sdata[tid] = op(sdata[tid], sdata[tid + 128]); } __syncthreads(); }
  if (blockSize >= 128) { if (tid < 64) { sdata[tid] = op(sdata[tid], sdata[tid + 64]); } __syncthreads(); }
}

// Kernel 6 | 000: 0.381 ms, 43.996 GB/s | 002 reduce_5: 2.397 ms. Completely unrolled with
// the block size as a template parameter; warpReduce<blockSize> as in Kernel 5 (flagged).
template <class T, class Op, unsigned BlockSize>
__global__ void harris5(const T *g_idata, T *g_odata, unsigned long long n) {
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  harris_first_add<T, Op>(g_idata, sdata, n);
  harris_unrolled_tree<T, Op, BlockSize>(sdata, tid);
  if (tid < 32) warp_reduce_volatile_unsafe<T, Op, BlockSize>(sdata, tid);
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// 002's reduce_v6 (its table's second "reduce_5" row: 2.426 ms): Kernel 6 with the last warp
// reduced by __shfl_down_sync instead of volatile shared memory (correct on Volta+).
template <class T, class Op, unsigned BlockSize>
__global__ void harris5_shfl(const T *g_idata, T *g_odata, unsigned long long n) {
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  harris_first_add<T, Op>(g_idata, sdata, n);
  harris_unrolled_tree<T, Op, BlockSize>(sdata, tid);
  if (tid < 32) {
    T v = sdata[tid];
    if (BlockSize >= 64) v = op(v, sdata[tid + 32]);
    v = warp_reduce_shuffle<T, Op>(v);
    if (tid == 0) g_odata[blockIdx.x] = v;
  }
}

// Kernel 7 | 000: 0.268 ms, 62.671 GB/s (73 GB/s on 32M elements). Multiple elements per
// thread (algorithm cascading): a grid-stride while loop accumulating into shared memory, as
// in the slides; the grid comes from the launch parameter max_blocks (Harris: "64-256 blocks
// of 128 threads" on G80). The second read is bounds-checked (the slides read past n).
template <class T, class Op, unsigned BlockSize>
__global__ void harris6(const T *g_idata, T *g_odata, unsigned long long n) {
  constexpr unsigned int blockSize = BlockSize;
  const Op op{};
  T *sdata = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * (blockSize * 2) + tid;
  unsigned long long gridSize = static_cast<unsigned long long>(blockSize) * 2 * gridDim.x;
  sdata[tid] = Op::template identity<T>();
  while (i < n) {
    sdata[tid] = op(sdata[tid], op(g_idata[i], load_or_identity<T, Op>(g_idata, i + blockSize, n)));
    i += gridSize;
  }
  __syncthreads();
  harris_unrolled_tree<T, Op, blockSize>(sdata, tid);
  if (tid < 32) warp_reduce_volatile_unsafe<T, Op, blockSize>(sdata, tid);
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

} // namespace seeds
} // namespace rt
