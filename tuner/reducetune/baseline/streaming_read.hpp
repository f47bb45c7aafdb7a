// The read-only streaming kernels (nvcc, C++17): 16-byte vector loads, several loads in flight
// per thread, nothing written. A few shapes, because which one streams fastest depends on the
// device (the ceiling is the best of them): the grid-stride loop most bandwidth tests use, and
// CUB's own layout, in which each block reads contiguous tiles of its even share of the input,
// over one wave of resident blocks or, as CUB's DeviceReduce launches it, several.
#pragma once

#include "reducetune/cuda/device_info.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace reducetune {

enum class read_layout {
  grid_stride, // thread i reads i, i + grid × block, …: each warp's loads are a grid apart
  even_share,  // block b reads tiles [b × share, (b + 1) × share), as CUB's DeviceReduce does
};

struct read_shape {
  read_layout layout;
  unsigned block;  // threads per block
  unsigned unroll; // independent 16-byte loads in flight per thread
  unsigned waves;  // the grid in waves of resident blocks (CUB's DeviceReduce: 5)
  const char *name;
};

// Every compiled shape, in a fixed order.
[[nodiscard]] const std::vector<read_shape> &read_shapes();

// The shape's grid: its waves times as many blocks as are resident on the device at once (an
// occupancy query, so ask once per shape, not once per launch).
[[nodiscard]] unsigned streaming_read_grid(const read_shape &shape, const device_info &device);

// invalid_configuration unless `bytes` is a multiple of 16 and `data` 16-byte aligned (the
// kernels' loads are 16 bytes wide): callers may refuse before touching a device.
void require_streaming_read(const void *data, std::uint64_t bytes);

// Enqueues one read of `bytes` at `data` (require_streaming_read refuses others) in the given
// shape over `grid` blocks; sink receives a value only in the impossible case that guards
// against dead-code elimination.
void enqueue_streaming_read(const read_shape &shape, unsigned grid, const void *data,
                            std::uint64_t bytes, unsigned *sink, cudaStream_t s);

// The mixed stream (issue 26's axis benchmark, a reference beside the ceilings): the streaming
// read of `bytes` at `data` that also writes `out_bytes` at `out`, spread along the input as a
// reduction's outputs are (each tile, a block's 16-byte loads, writes its share of
// out's 4-byte words: out_bytes rounded down to 4). A plain stream with a reduction's reads
// and writes and no reduction in it. invalid_configuration for what require_streaming_read
// refuses, an `out` not 4-byte aligned, or `out_bytes` over `bytes`.
void require_streaming_mixed(const void *data, std::uint64_t bytes, const void *out,
                             std::uint64_t out_bytes);
void enqueue_streaming_mixed(const void *data, std::uint64_t bytes, void *out,
                             std::uint64_t out_bytes, cudaStream_t s);

} // namespace reducetune
