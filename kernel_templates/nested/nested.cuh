// Nested reduction by dynamic parallelism: seed 003 (Tosi, "Nested Reduction in CUDA"; table
// "Dim. Array (2^22), Dim. Blocco (512), RTX 3090": Nested Sync 109.319 ms, Nested NoSyn
// 42.94 ms, Nested Fixed 0.734 ms). Compiled with -rdc=true and linked against the device
// runtime (family.json: "requires": "rdc").
//
// CUDA 12 removed device-side cudaDeviceSynchronize() (CDP2), so the seed's Version 1
// (launch the child, then cudaDeviceSynchronize()) no longer compiles; its exact form is kept
// as tests/data/templates/nested_faithful (a family that is expected to fail to compile).
// Here the closest forms that CDP2 accepts:
//   gpuRecursiveReduce        Version 1; the child goes to cudaStreamTailLaunch instead of
//                             being waited for. Nothing in the seed runs after the wait, and a
//                             tail launch starts only when the whole launching grid is done,
//                             so every write of the parent level is visible to the child.
//   gpuRecursiveReduceNosync  Version 2, as written: thread 0 launches the child right after
//                             its own add, without waiting for the block's other threads. A
//                             child sees only the launching thread's prior writes, so this is
//                             a race (the seed says there is none): kept, flagged.
//   gpuRecursiveReduceFixed   Version 3 ("gpuRecursiveReduce2" in the seed's body): block 0 of
//                             each level launches the next level for the whole grid. Launched
//                             to cudaStreamTailLaunch, the next level waits for every block of
//                             this one (the seed's plain launch raced with the other blocks).
//
// Generalised: int -> T, `+` -> Op; each block's segment has cnt = min(width, n - base)
// elements, and positions at or past cnt read as the identity (the seed assumed n a multiple
// of the block); at the leaf every thread returns (the seed returns thread 0 only and lets
// the rest reach a __syncthreads() without it).
#pragma once

#include "common/rt_ops.cuh"

namespace rt {
namespace nested {

enum class child_stream { tail, plain };

__device__ __forceinline__ unsigned long long segment(unsigned long long base, unsigned long long n,
                                                      unsigned long long width) {
  const unsigned long long left = n > base ? n - base : 0;
  return left < width ? left : width;
}

template <class T, class Op, child_stream S>
__global__ void recursive_child(T *idata, T *odata, unsigned int isize, unsigned long long cnt);

// One level of Version 1 (Sync = true) or Version 2 (Sync = false) on a block's segment.
template <class T, class Op, child_stream S, bool Sync>
__device__ __forceinline__ void recursive_level(T *idata, T *odata, unsigned int isize,
                                                unsigned long long cnt) {
  const Op op{};
  unsigned int tid = threadIdx.x;
  if (isize == 2) { // stop condition
    if (tid == 0)
      odata[0] = op(load_or_identity<T, Op>(idata, 0, cnt), load_or_identity<T, Op>(idata, 1, cnt));
    return;
  }
  int istride = isize >> 1;
  const unsigned long long child_cnt = cnt < (unsigned)istride ? cnt : (unsigned)istride;
  if (Sync) {
    if (istride > 1 && tid < istride && tid < cnt)
      idata[tid] = op(idata[tid], load_or_identity<T, Op>(idata, tid + istride, cnt));
    __syncthreads();
    if (tid == 0)
      recursive_child<T, Op, S><<<1, istride, 0, cudaStreamTailLaunch>>>(idata, odata, istride,
                                                                         child_cnt);
    __syncthreads();
  } else {
    if (istride > 1 && tid < istride) {
      if (tid < cnt)
        idata[tid] = op(idata[tid], load_or_identity<T, Op>(idata, tid + istride, cnt));
      if (tid == 0) recursive_child<T, Op, S><<<1, istride>>>(idata, odata, istride, child_cnt);
    }
  }
}

template <class T, class Op, child_stream S>
__global__ void recursive_child(T *idata, T *odata, unsigned int isize, unsigned long long cnt) {
  recursive_level<T, Op, S, S == child_stream::tail>(idata, odata, isize, cnt);
}

template <class T, class Op>
__global__ void fixed_level(T *g_idata, T *g_odata, unsigned int iStride, unsigned int iDim,
                            unsigned long long n);

// One level of Version 3 over the whole grid.
template <class T, class Op>
__device__ __forceinline__ void fixed_body(T *g_idata, T *g_odata, unsigned int iStride,
                                           unsigned int iDim, unsigned long long n) {
  const Op op{};
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * iDim;
  T *idata = g_idata + base;
  const unsigned long long cnt = segment(base, n, iDim);
  if (iStride == 1) { // stop condition
    if (threadIdx.x == 0)
      g_odata[blockIdx.x] =
          op(load_or_identity<T, Op>(idata, 0, cnt), load_or_identity<T, Op>(idata, 1, cnt));
    return;
  }
  if (threadIdx.x < cnt)
    idata[threadIdx.x] = op(idata[threadIdx.x], load_or_identity<T, Op>(idata, threadIdx.x + iStride, cnt));
  if (threadIdx.x == 0 && blockIdx.x == 0)
    fixed_level<T, Op><<<gridDim.x, iStride / 2, 0, cudaStreamTailLaunch>>>(g_idata, g_odata,
                                                                           iStride / 2, iDim, n);
}

template <class T, class Op>
__global__ void fixed_level(T *g_idata, T *g_odata, unsigned int iStride, unsigned int iDim,
                            unsigned long long n) {
  fixed_body<T, Op>(g_idata, g_odata, iStride, iDim, n);
}

} // namespace nested

namespace seeds {

// Entry points (ABI prefix: in, out, n), one block of BlockSize threads per BlockSize elements.
// In place: the runner gives them a scratch copy.
template <class T, class Op, unsigned BlockSize>
__global__ void gpuRecursiveReduce(T *g_idata, T *g_odata, unsigned long long n) {
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x;
  nested::recursive_level<T, Op, nested::child_stream::tail, true>(
      g_idata + base, &g_odata[blockIdx.x], blockDim.x, nested::segment(base, n, blockDim.x));
}

template <class T, class Op, unsigned BlockSize>
__global__ void gpuRecursiveReduceNosync(T *g_idata, T *g_odata, unsigned long long n) {
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x;
  nested::recursive_level<T, Op, nested::child_stream::plain, false>(
      g_idata + base, &g_odata[blockIdx.x], blockDim.x, nested::segment(base, n, blockDim.x));
}

// The seed launches Version 3 with <<<grid, block / 2>>>(d_idata, d_odata, block / 2, block):
// here BlockSize threads reduce 2 * BlockSize elements per block.
template <class T, class Op, unsigned BlockSize>
__global__ void gpuRecursiveReduceFixed(T *g_idata, T *g_odata, unsigned long long n) {
  nested::fixed_body<T, Op>(g_idata, g_odata, blockDim.x, 2 * blockDim.x, n);
}

} // namespace seeds
} // namespace rt
