// Seed 003's Nested Reduction Version 1 (gpuRecursiveReduce), as written but for T/Op: the
// parent waits for its child with device-side cudaDeviceSynchronize(). CUDA 12 removed that
// call (CDP2), so this family is EXPECTED NOT TO COMPILE: tests check that the compile error
// names cudaDeviceSynchronize and carries the log. The form that compiles is
// kernel_templates/nested (child launched to cudaStreamTailLaunch).
#pragma once

#include "common/rt_ops.cuh"

namespace rt {
namespace seeds {

template <class T, class Op, unsigned BlockSize>
__global__ void gpuRecursiveReduce(T *g_idata, T *g_odata, unsigned int isize) {
  const Op op{};
  unsigned int tid = threadIdx.x;
  T *idata = g_idata + blockIdx.x * blockDim.x;
  T *odata = &g_odata[blockIdx.x];
  if (isize == 2 && tid == 0) {
    g_odata[blockIdx.x] = op(idata[0], idata[1]);
    return;
  }
  int istride = isize >> 1;
  if (istride > 1 && tid < istride) idata[tid] = op(idata[tid], idata[tid + istride]);
  __syncthreads();
  if (tid == 0) {
    gpuRecursiveReduce<T, Op, BlockSize><<<1, istride>>>(idata, odata, istride);
    cudaDeviceSynchronize();
  }
  __syncthreads();
}

} // namespace seeds
} // namespace rt
