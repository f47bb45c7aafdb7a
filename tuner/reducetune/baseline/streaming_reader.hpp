// The streaming read launched as an application launches a kernel: one launch over the caller's
// bytes on the caller's stream, no gate, no L2 flush, no synchronisation (the axis benchmark
// times it between two CUDA events beside the reductions, issue 26: like with like). What a
// launch needs besides its arguments is made once per device: the sink, and each shape's grid
// (an occupancy query) the first time that shape is read.
#pragma once

#include "reducetune/baseline/streaming_read.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace reducetune {

// The index in read_shapes() of the shape of that name (read_shape::name, as
// measure_streaming_ceiling reports its fastest); invalid_configuration naming every shape
// otherwise.
[[nodiscard]] std::size_t read_shape_index(std::string_view name);

class streaming_reader {
public:
  // Allocates the sink on the current device, which must be `device`.
  explicit streaming_reader(const device_info &device);

  // One launch of read_shapes()[shape] over `bytes` at `data` on `s` (enqueue_streaming_read's
  // requirements): nothing allocated or synchronised (the shape's grid is asked on its first
  // read and kept).
  void read(std::size_t shape, const void *data, std::uint64_t bytes, cudaStream_t s);

  // The grid read_shapes()[shape] launches with on this device.
  [[nodiscard]] unsigned grid(std::size_t shape);

private:
  device_info m_device;
  device_buffer m_sink;
  std::vector<unsigned> m_grids; // by shape index; 0: not asked yet
};

} // namespace reducetune
