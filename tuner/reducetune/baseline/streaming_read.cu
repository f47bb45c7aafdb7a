#include "reducetune/baseline/streaming_read.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {
namespace {

constexpr unsigned block_size = 256;
constexpr unsigned unroll = 4; // independent 16-byte loads in flight per thread

__global__ void streaming_read(const uint4 *__restrict__ data, unsigned long long count,
                               unsigned *sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (unroll - 1) * stride < count; i += unroll * stride) {
    uint4 v[unroll];
#pragma unroll
    for (unsigned u = 0; u < unroll; ++u) v[u] = __ldg(data + i + u * stride);
#pragma unroll
    for (unsigned u = 0; u < unroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldg(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc; // keeps the loads; effectively never taken
}

} // namespace

void enqueue_streaming_read(const void *data, std::uint64_t bytes, unsigned *sink,
                            const device_info &device, cudaStream_t s) {
  if (bytes % 16 != 0) throw invalid_configuration("streaming read needs a multiple of 16 bytes");
  const unsigned grid = static_cast<unsigned>(device.sm_count) * (2048 / block_size);
  streaming_read<<<grid, block_size, 0, s>>>(static_cast<const uint4 *>(data), bytes / 16, sink);
  RT_CUDA_CALL(cudaGetLastError());
}

} // namespace reducetune
