// The measured bandwidth ceiling: a vectorised (16-byte), read-only, grid-stride kernel that
// only reads, timed cold with the same sampler as the variants. What no reduction can beat;
// measured once per device and kept.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/measurement.hpp"

#include <cstdint>

namespace reducetune {

// Cold samples over a buffer of `bytes` (default: 1 GiB, far beyond any L2); the timing and
// the bandwidth from its median.
struct ceiling_result {
  timing cold;
  double bytes_per_s = 0;
};
[[nodiscard]] ceiling_result measure_streaming_ceiling(const device_info &device,
                                                       std::uint64_t bytes = 1ULL << 30,
                                                       const stopping_rule &rule = {});

} // namespace reducetune
