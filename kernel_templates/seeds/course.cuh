// The course variants: seed 003 (Fabio Tosi, "Complementi di CUDA - Riduzione Parallela",
// Univ. Bologna 2024/25; table "Dim. Array (2^26), Dim. Blocco (512), RTX 3090") and seed 004
// (Korean cuda-study notes on reduce_smem.cu; table "16M elements, 256 threads", the
// "Effiective Bandwidth" table). Both follow Cheng, Grossman & McKercher, "Professional CUDA C
// Programming"; names are the seeds' own.
//
// Most of these reduce in place in global memory (`T* g_idata` is overwritten: the family
// marks them in_place and the runner gives them a scratch copy). The seeds assume n a
// multiple of the data per block and return early with `if (idx >= n) return;` before
// __syncthreads(). Generalised: no thread leaves early (a barrier that some threads never
// reach is undefined); a block's segment has cnt = min(blockDim.x, n - base) elements,
// positions at or past cnt are never written and read as the identity. The unrolled first
// levels combine whichever of their 2/4/8 elements exist (the seeds skip a thread whose last
// element is past n, which drops data). Everything else is kept, including the
// volatile last-warp unroll without __syncwarp() (racy on Volta+; flagged in family.json).
#pragma once

#include "common/rt_warp.cuh"

namespace rt {
namespace seeds {
namespace course {

__device__ __forceinline__ unsigned long long segment(unsigned long long base, unsigned long long n,
                                                      unsigned int width) {
  const unsigned long long left = n > base ? n - base : 0;
  return left < width ? left : width;
}

// One in-place step on a block's segment: idata[i] op= idata[i + stride], bounded by cnt.
template <class T, class Op>
__device__ __forceinline__ void step(T *idata, unsigned int i, unsigned int stride,
                                     unsigned long long cnt) {
  if (i < cnt) idata[i] = Op{}(idata[i], load_or_identity<T, Op>(idata, i + stride, cnt));
}

// `if (bs >= 2*half && tid < half) idata[tid] += idata[tid + half]; __syncthreads();` from
// 1024 down to 64: the seeds' complete unroll (bs is blockDim.x or iBlockSize).
template <class T, class Op>
__device__ __forceinline__ void complete_unroll(T *idata, unsigned int tid, unsigned int bs,
                                                unsigned long long cnt) {
  if (bs >= 1024 && tid < 512) step<T, Op>(idata, tid, 512, cnt);
  __syncthreads();
  if (bs >= 512 && tid < 256) step<T, Op>(idata, tid, 256, cnt);
  __syncthreads();
  if (bs >= 256 && tid < 128) step<T, Op>(idata, tid, 128, cnt);
  __syncthreads();
  if (bs >= 128 && tid < 64) step<T, Op>(idata, tid, 64, cnt);
  __syncthreads();
}

// `volatile int *vmem = idata; vmem[tid] += vmem[tid + 32]; ... += vmem[tid + 1];` on a
// bounded segment, no __syncwarp() (seed-faithful, racy on Volta+). Lanes tid < 32 call it.
template <class T, class Op>
__device__ __forceinline__ void warp_unroll_unsafe(volatile T *vmem, unsigned int tid,
                                                   unsigned long long cnt) {
  const Op op{};
  const T id = Op::template identity<T>();
  if (tid < cnt) {
    vmem[tid] = op(vmem[tid], tid + 32 < cnt ? vmem[tid + 32] : id);
    vmem[tid] = op(vmem[tid], tid + 16 < cnt ? vmem[tid + 16] : id);
    vmem[tid] = op(vmem[tid], tid + 8 < cnt ? vmem[tid + 8] : id);
    vmem[tid] = op(vmem[tid], tid + 4 < cnt ? vmem[tid + 4] : id);
    vmem[tid] = op(vmem[tid], tid + 2 < cnt ? vmem[tid + 2] : id);
    vmem[tid] = op(vmem[tid], tid + 1 < cnt ? vmem[tid + 1] : id);
  }
}

// The unrolled first level: g_idata[idx] = a1 + a2 + ... over K data blocks, in place.
template <class T, class Op, unsigned K>
__device__ __forceinline__ void unroll_in_place(T *g_idata, unsigned long long idx,
                                                unsigned long long n) {
  const Op op{};
  if (idx < n) {
    T a[K];
#pragma unroll
    for (unsigned k = 0; k < K; ++k) a[k] = load_or_identity<T, Op>(g_idata, idx + k * blockDim.x, n);
    T sum = a[0];
#pragma unroll
    for (unsigned k = 1; k < K; ++k) sum = op(sum, a[k]);
    g_idata[idx] = sum;
  }
}

// The same first level into a register (the shared-memory variants' `tmp`).
template <class T, class Op, unsigned K>
__device__ __forceinline__ T unroll_to_register(const T *g_idata, unsigned long long idx,
                                                unsigned long long n) {
  const Op op{};
  T a[K];
#pragma unroll
  for (unsigned k = 0; k < K; ++k) a[k] = load_or_identity<T, Op>(g_idata, idx + k * blockDim.x, n);
  T tmp = a[0];
#pragma unroll
  for (unsigned k = 1; k < K; ++k) tmp = op(tmp, a[k]);
  return tmp;
}

} // namespace course

// 003 "Neighbored (Divergence)": grid 131072, 2.332 ms. In place, `tid % (2*stride)`.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceNeighbored(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x;
  T *idata = g_idata + base;
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    if ((tid % (2 * stride)) == 0) course::step<T, Op>(idata, tid, stride, cnt);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// 003 "Neighbored (No Divergence)": 1.325 ms. index = 2 * stride * tid.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceNeighboredLess(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x;
  T *idata = g_idata + base;
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    int index = 2 * stride * tid;
    if (index < blockDim.x) course::step<T, Op>(idata, index, stride, cnt);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// 003 "Interleaved": 1.175 ms. Stride from blockDim.x / 2 down.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceInterleaved(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x;
  T *idata = g_idata + base;
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) course::step<T, Op>(idata, tid, stride, cnt);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// 003 "Unroll 2/4/8 Blocks": 0.683 / 0.484 / 0.423 ms (grid / 2, / 4, / 8). Each block first
// folds K data blocks into its first one, then the interleaved tree.
template <class T, class Op, unsigned K>
__device__ __forceinline__ void reduce_unrolling(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x * K;
  unsigned long long idx = base + threadIdx.x;
  T *idata = g_idata + base;
  course::unroll_in_place<T, Op, K>(g_idata, idx, n);
  __syncthreads();
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) course::step<T, Op>(idata, tid, stride, cnt);
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

template <class T, class Op, unsigned BlockSize>
__global__ void reduceUnrolling2(T *g_idata, T *g_odata, unsigned long long n) {
  reduce_unrolling<T, Op, 2>(g_idata, g_odata, n);
}
template <class T, class Op, unsigned BlockSize>
__global__ void reduceUnrolling4(T *g_idata, T *g_odata, unsigned long long n) {
  reduce_unrolling<T, Op, 4>(g_idata, g_odata, n);
}
template <class T, class Op, unsigned BlockSize>
__global__ void reduceUnrolling8(T *g_idata, T *g_odata, unsigned long long n) {
  reduce_unrolling<T, Op, 8>(g_idata, g_odata, n);
}

// 003 "Unroll 8 Blocks + Last Warp": 0.414 ms. Loop while stride > 32, then the volatile
// unroll in global memory (no __syncwarp: flagged).
template <class T, class Op, unsigned BlockSize>
__global__ void reduceUnrollWarps8(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x * 8;
  T *idata = g_idata + base;
  course::unroll_in_place<T, Op, 8>(g_idata, base + tid, n);
  __syncthreads();
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) course::step<T, Op>(idata, tid, stride, cnt);
    __syncthreads();
  }
  if (tid < 32) course::warp_unroll_unsafe<T, Op>(idata, tid, cnt);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// 003 "Unroll 8 Blocks + Loop + Last Warp": 0.412 ms. Complete unroll on blockDim.x.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceCompleteUnrollWarps8(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x * 8;
  T *idata = g_idata + base;
  course::unroll_in_place<T, Op, 8>(g_idata, base + tid, n);
  __syncthreads();
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  course::complete_unroll<T, Op>(idata, tid, blockDim.x, cnt);
  if (tid < 32) course::warp_unroll_unsafe<T, Op>(idata, tid, cnt);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// 003 "Templetized Kernel": 0.411 ms. reduceCompleteUnroll<iBlockSize>: the same with the
// block size a template parameter.
template <class T, class Op, unsigned iBlockSize>
__global__ void reduceCompleteUnroll(T *g_idata, T *g_odata, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x * 8;
  T *idata = g_idata + base;
  course::unroll_in_place<T, Op, 8>(g_idata, base + tid, n);
  __syncthreads();
  const unsigned long long cnt = course::segment(base, n, iBlockSize);
  course::complete_unroll<T, Op>(idata, tid, iBlockSize, cnt);
  if (tid < 32) course::warp_unroll_unsafe<T, Op>(idata, tid, cnt);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// The shared-memory tail common to the smem variants: complete unroll on `bs`, volatile
// warp unroll without __syncwarp (flagged), thread 0 writes the block's result.
template <class T, class Op>
__device__ __forceinline__ void smem_tail(T *smem, T *g_odata, unsigned int bs) {
  unsigned int tid = threadIdx.x;
  course::complete_unroll<T, Op>(smem, tid, bs, bs);
  if (tid < 32) warp_reduce_volatile_unsafe<T, Op, 64>(smem, tid);
  if (tid == 0) g_odata[blockIdx.x] = smem[0];
}

// 003 "Templetized Kernel + SMEM": 0.360 ms. Unroll 8 into a register, static shared memory.
template <class T, class Op, unsigned iBlockSize>
__global__ void reduceCompleteUnrollShared(const T *g_idata, T *g_odata, unsigned long long n) {
  static_assert(iBlockSize >= 64, "the warp unroll reads smem[tid + 32]");
  __shared__ T smem[iBlockSize];
  unsigned int tid = threadIdx.x;
  unsigned long long idx = static_cast<unsigned long long>(blockIdx.x) * blockDim.x * 8 + threadIdx.x;
  smem[tid] = course::unroll_to_register<T, Op, 8>(g_idata, idx, n);
  __syncthreads();
  smem_tail<T, Op>(smem, g_odata, iBlockSize);
}

// 004 reduceGmem: 0.248 ms, 271.66 GB/s (16M ints, 256 threads). In place, complete unroll
// on blockDim.x, volatile warp unroll in global memory.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceGmem(T *g_in, T *g_out, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockDim.x) * blockIdx.x;
  T *in = g_in + base;
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  course::complete_unroll<T, Op>(in, tid, blockDim.x, cnt);
  if (tid < 32) course::warp_unroll_unsafe<T, Op>(in, tid, cnt);
  if (tid == 0) g_out[blockIdx.x] = in[0];
}

// 004 reduceGmemUnroll: 0.120 ms, 559.79 GB/s. Four data blocks folded in place first.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceGmemUnroll(T *g_in, T *g_out, unsigned long long n) {
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockDim.x) * blockIdx.x * 4;
  T *in = g_in + base;
  course::unroll_in_place<T, Op, 4>(g_in, base + tid, n);
  __syncthreads();
  const unsigned long long cnt = course::segment(base, n, blockDim.x);
  course::complete_unroll<T, Op>(in, tid, blockDim.x, cnt);
  if (tid < 32) course::warp_unroll_unsafe<T, Op>(in, tid, cnt);
  if (tid == 0) g_out[blockIdx.x] = in[0];
}

// 004 reduceSmem: 0.201 ms, 335.18 GB/s. Static `__shared__ int smem[DIM]` (DIM = 256 in the
// seed; here the block size).
template <class T, class Op, unsigned BlockSize>
__global__ void reduceSmem(const T *g_in, T *g_out, unsigned long long n) {
  static_assert(BlockSize >= 64, "the warp unroll reads smem[tid + 32]");
  __shared__ T smem[BlockSize];
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockDim.x) * blockIdx.x;
  smem[tid] = load_or_identity<T, Op>(g_in, base + tid, n);
  __syncthreads();
  smem_tail<T, Op>(smem, g_out, blockDim.x);
}

// 004 reduceSmemUnroll: 0.097 ms, 692.52 GB/s. Four loads into a register, then shared
// memory. (The seed's `idx + blockDim.x * 3 <= n` reads one element past n; fixed by the
// bounds-checked loads.)
template <class T, class Op, unsigned BlockSize>
__global__ void reduceSmemUnroll(const T *g_in, T *g_out, unsigned long long n) {
  static_assert(BlockSize >= 64, "the warp unroll reads smem[tid + 32]");
  __shared__ T smem[BlockSize];
  unsigned int tid = threadIdx.x;
  unsigned long long idx = static_cast<unsigned long long>(blockDim.x) * blockIdx.x * 4 + threadIdx.x;
  smem[tid] = course::unroll_to_register<T, Op, 4>(g_in, idx, n);
  __syncthreads();
  smem_tail<T, Op>(smem, g_out, blockDim.x);
}

// 004 reduceSmemDyn ("Parallel Reduction with Dynamic Shared Memory"; no timing in the
// table: "no difference from static"). reduceSmem with `extern __shared__`.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceSmemDyn(const T *g_in, T *g_out, unsigned long long n) {
  T *smem = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  unsigned long long base = static_cast<unsigned long long>(blockDim.x) * blockIdx.x;
  smem[tid] = load_or_identity<T, Op>(g_in, base + tid, n);
  __syncthreads();
  smem_tail<T, Op>(smem, g_out, blockDim.x);
}

// 004 reduceSmemUnrollDyn: reduceSmemUnroll with `extern __shared__`.
template <class T, class Op, unsigned BlockSize>
__global__ void reduceSmemUnrollDyn(const T *g_in, T *g_out, unsigned long long n) {
  T *smem = dynamic_smem<T>();
  unsigned int tid = threadIdx.x;
  unsigned long long idx = static_cast<unsigned long long>(blockDim.x) * blockIdx.x * 4 + threadIdx.x;
  smem[tid] = course::unroll_to_register<T, Op, 4>(g_in, idx, n);
  __syncthreads();
  smem_tail<T, Op>(smem, g_out, blockDim.x);
}

} // namespace seeds
} // namespace rt
