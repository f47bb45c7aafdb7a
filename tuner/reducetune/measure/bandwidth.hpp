// Bandwidth and how it compares with the device's limits.
//
// Theoretical peak: device_info::peak_bytes_per_s (cuda/device_info.hpp).
// The measured ceiling is what a vectorised read-only streaming kernel reaches
// (baseline/streaming_ceiling.hpp): the realistic 100 %.
#pragma once

#include <cstdint>

namespace reducetune {

// Bytes per second; throws invalid_configuration when seconds ≤ 0.
[[nodiscard]] double bandwidth_bytes_per_s(std::uint64_t bytes, double seconds);

// 100 · achieved / reference; 0 when the reference is unknown (≤ 0).
[[nodiscard]] double percent_of(double achieved, double reference) noexcept;

} // namespace reducetune
