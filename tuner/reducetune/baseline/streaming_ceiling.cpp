#include "reducetune/baseline/streaming_ceiling.hpp"

#include "reducetune/baseline/streaming_read.hpp"
#include "reducetune/baseline/streaming_reader.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/sampler.hpp"

#include <algorithm>

namespace reducetune {

std::uint64_t default_ceiling_bytes(const device_info &device) noexcept {
  return std::min<std::uint64_t>(4ULL << 30, device.global_memory_bytes / 8);
}

ceiling_result measure_streaming_ceiling(const device_info &device, std::uint64_t bytes,
                                         const stopping_rule &rule) {
  if (bytes == 0) bytes = default_ceiling_bytes(device);
  bytes -= bytes % 16;
  device_buffer data(bytes);
  data.zero();
  streaming_reader reader(device); // the sink, and each shape's grid asked once
  stream s;
  l2_flush flush(device.l2_bytes);
  ceiling_result best;
  best.bytes = bytes;
  for (std::size_t i = 0; i < read_shapes().size(); ++i) {
    const read_shape &shape = read_shapes()[i];
    const auto enqueue = [&](cudaStream_t st) { reader.read(i, data.data(), bytes, st); };
    enqueue(s.get()); // warm-up
    s.synchronize();
    timing t = sample(enqueue, s.get(), &flush, rule);
    const double bw = bandwidth_bytes_per_s(bytes, t.stats.median);
    best.shapes.push_back({shape.name, bw});
    if (bw > best.bytes_per_s) {
      best.bytes_per_s = bw;
      best.cold = std::move(t);
      best.shape = shape.name;
    }
  }
  return best;
}

} // namespace reducetune
