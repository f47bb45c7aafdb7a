// Test only: compiles cleanly, then faults at run time. The pass kernel writes through a wild
// pointer (out + 2^40 elements, far outside any allocation), which raises an illegal-address
// error and poisons the CUDA context: the fault-isolation tests check that the worker that ran
// it is restarted and the failure is recorded, and the study goes on.
#pragma once

#include "common/rt_ops.cuh"

namespace rt {
namespace faulting {

template <class T, class Op> __global__ void pass(const T *in, T *out, unsigned long long n) {
  // volatile so the compiler cannot prove the store dead or out of bounds and drop it.
  volatile unsigned long long wild = 1ull << 40;
  if (threadIdx.x == 0) out[wild] = n > 0 ? in[0] : Op::template identity<T>();
}

} // namespace faulting
} // namespace rt
