// The CUB baseline: cub::DeviceReduce (Sum, Min, Max, Reduce with a product functor) for
// every dtype × op (the half types through Reduce with a float32 accumulator), compiled by
// nvcc into the library, temporary storage allocated once for the largest n. Kept free of C++20 (nvcc compiles the .cu as C++17); evaluate_cub() in
// cub_baseline.hpp times it with the same sampler as the variants.
#pragma once

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/verify/types.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reducetune {

class cub_reduce {
public:
  cub_reduce(dtype type, reduce_op op, std::uint64_t max_n);
  // out: one element of the dtype on the device.
  void enqueue(const void *in, void *out, std::uint64_t n, cudaStream_t s);

private:
  dtype m_type;
  reduce_op m_op;
  std::uint64_t m_max_n;
  device_buffer m_temp;
};

} // namespace reducetune
