#include "reducetune/baseline/streaming_ceiling.hpp"

#include "reducetune/baseline/streaming_read.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/sampler.hpp"

namespace reducetune {

ceiling_result measure_streaming_ceiling(const device_info &device, std::uint64_t bytes,
                                         const stopping_rule &rule) {
  bytes -= bytes % 16;
  device_buffer data(bytes), sink(sizeof(unsigned));
  data.zero();
  stream s;
  l2_flush flush(device.l2_bytes);
  const auto enqueue = [&](cudaStream_t st) {
    enqueue_streaming_read(data.data(), bytes, sink.as<unsigned>(), device, st);
  };
  enqueue(s.get()); // warm-up
  s.synchronize();
  ceiling_result r;
  r.cold = sample(enqueue, s.get(), &flush, rule);
  r.bytes_per_s = bandwidth_bytes_per_s(bytes, r.cold.stats.median);
  return r;
}

} // namespace reducetune
