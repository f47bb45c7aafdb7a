// Test only: a deliberate syntax error (missing ';' and an undeclared identifier), so tests can
// check that a compile_error carries NVRTC's log (which names this file and the line after the missing semicolon).
#pragma once

#include "common/rt_ops.cuh"

namespace rt {
namespace broken {

template <class T, class Op> __global__ void pass(const T *in, T *out, unsigned long long n) {
  T x = Op::template identity<T>()  // <- missing ';' (deliberate)
  out[blockIdx.x] = x + this_identifier_does_not_exist;
}

} // namespace broken
} // namespace rt
