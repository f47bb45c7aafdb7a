// The measured bandwidth ceiling: read-only kernels of 16-byte vector loads that only read,
// timed cold with the same sampler as the variants. Several read shapes are measured and the
// fastest is the ceiling, because one fixed shape can stream slower than the best reduction
// (a ceiling that CUB beats says nothing). Measured once per device and kept.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/measurement.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace reducetune {

struct shape_bandwidth {
  std::string shape; // read_shape::name
  double bytes_per_s = 0;
};

// The fastest shape's cold samples and the bandwidth from their median, with every shape's
// bandwidth for the record.
struct ceiling_result {
  timing cold;
  double bytes_per_s = 0;
  std::uint64_t bytes = 0;
  std::string shape;
  std::vector<shape_bandwidth> shapes;
};

// The default read: 4 GiB (what a 2^30-element float32 reduction reads, far beyond any L2), or
// an eighth of the device's memory when that is smaller.
[[nodiscard]] std::uint64_t default_ceiling_bytes(const device_info &device) noexcept;

// bytes = 0: default_ceiling_bytes(device).
[[nodiscard]] ceiling_result measure_streaming_ceiling(const device_info &device,
                                                       std::uint64_t bytes = 0,
                                                       const stopping_rule &rule = {});

} // namespace reducetune
