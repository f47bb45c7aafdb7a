// The read-only streaming kernel (nvcc, C++17): 16-byte vector loads, grid-stride, several
// loads in flight per thread, nothing written.
#pragma once

#include "reducetune/cuda/device_info.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace reducetune {

// Enqueues one read of `bytes` (a multiple of 16) at `data`; sink receives a value only in
// the impossible case that guards against dead-code elimination.
void enqueue_streaming_read(const void *data, std::uint64_t bytes, unsigned *sink,
                            const device_info &device, cudaStream_t s);

} // namespace reducetune
