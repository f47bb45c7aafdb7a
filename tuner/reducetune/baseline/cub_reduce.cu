#include "reducetune/baseline/cub_reduce.hpp"

#include "reducetune/errors.hpp"

#include <cub/device/device_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <limits>

namespace reducetune {
namespace {

struct product_op {
  template <class T> __host__ __device__ T operator()(const T &a, const T &b) const {
    return a * b;
  }
};

// One call for both the size query (temp == nullptr) and the reduction.
template <class T>
cudaError_t dispatch(reduce_op op, void *temp, std::size_t &temp_bytes, const void *in,
                     void *out, std::int64_t n, cudaStream_t s) {
  const T *d_in = static_cast<const T *>(in);
  T *d_out = static_cast<T *>(out);
  switch (op) {
  case reduce_op::sum: return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n, s);
  case reduce_op::min: return cub::DeviceReduce::Min(temp, temp_bytes, d_in, d_out, n, s);
  case reduce_op::max: return cub::DeviceReduce::Max(temp, temp_bytes, d_in, d_out, n, s);
  case reduce_op::prod:
    return cub::DeviceReduce::Reduce(temp, temp_bytes, d_in, d_out, n, product_op{}, T(1), s);
  }
  return cudaErrorInvalidValue;
}

// The half types as CUB reduces them under the rule of the tuned kernels: a float32
// accumulator (CUB's accumulator is what the operator returns from the initial value and an
// element, here float), rounded once into the H output. DeviceReduce::Sum would accumulate in
// H itself.
struct sum_f32 {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct prod_f32 {
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct min_f32 {
  __device__ float operator()(float a, float b) const { return b < a ? b : a; }
};
struct max_f32 {
  __device__ float operator()(float a, float b) const { return a < b ? b : a; }
};

template <class H>
cudaError_t dispatch_half(reduce_op op, void *temp, std::size_t &temp_bytes, const void *in,
                          void *out, std::int64_t n, cudaStream_t s) {
  const H *d_in = static_cast<const H *>(in);
  H *d_out = static_cast<H *>(out);
  constexpr float inf = std::numeric_limits<float>::infinity();
  switch (op) {
  case reduce_op::sum:
    return cub::DeviceReduce::Reduce(temp, temp_bytes, d_in, d_out, n, sum_f32{}, 0.0f, s);
  case reduce_op::min:
    return cub::DeviceReduce::Reduce(temp, temp_bytes, d_in, d_out, n, min_f32{}, inf, s);
  case reduce_op::max:
    return cub::DeviceReduce::Reduce(temp, temp_bytes, d_in, d_out, n, max_f32{}, -inf, s);
  case reduce_op::prod:
    return cub::DeviceReduce::Reduce(temp, temp_bytes, d_in, d_out, n, prod_f32{}, 1.0f, s);
  }
  return cudaErrorInvalidValue;
}

cudaError_t dispatch(dtype t, reduce_op op, void *temp, std::size_t &temp_bytes, const void *in,
                     void *out, std::int64_t n, cudaStream_t s) {
  switch (t) {
  case dtype::int32: return dispatch<int>(op, temp, temp_bytes, in, out, n, s);
  case dtype::int64: return dispatch<long long>(op, temp, temp_bytes, in, out, n, s);
  case dtype::float32: return dispatch<float>(op, temp, temp_bytes, in, out, n, s);
  case dtype::float64: return dispatch<double>(op, temp, temp_bytes, in, out, n, s);
  case dtype::float16: return dispatch_half<__half>(op, temp, temp_bytes, in, out, n, s);
  case dtype::bfloat16: return dispatch_half<__nv_bfloat16>(op, temp, temp_bytes, in, out, n, s);
  }
  return cudaErrorInvalidValue;
}

} // namespace

cub_reduce::cub_reduce(dtype type, reduce_op op, std::uint64_t max_n)
    : m_type(type), m_op(op), m_max_n(max_n) {
  std::size_t bytes = 0;
  RT_CUDA_CALL(dispatch(type, op, nullptr, bytes, nullptr, nullptr,
                        static_cast<std::int64_t>(max_n), nullptr));
  m_temp = device_buffer(bytes);
}

void cub_reduce::enqueue(const void *in, void *out, std::uint64_t n, cudaStream_t s) {
  if (n == 0 || n > m_max_n)
    throw invalid_configuration("CUB baseline: n must be in 1 .. " + std::to_string(m_max_n));
  std::size_t bytes = m_temp.size();
  RT_CUDA_CALL(dispatch(m_type, m_op, m_temp.data(), bytes, in, out,
                        static_cast<std::int64_t>(n), s));
}

} // namespace reducetune
