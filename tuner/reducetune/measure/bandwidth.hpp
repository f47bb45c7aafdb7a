// Bandwidth and how it compares with the device's limits.
//
// Theoretical peak: 2 × memory clock × bus width ÷ 8 (double data rate; clock in kHz and
// bus width in bits from cudaDevAttrMemoryClockRate / cudaDevAttrGlobalMemoryBusWidth).
// The measured ceiling is what a vectorised read-only streaming kernel reaches
// (baseline/streaming_ceiling.hpp): the realistic 100 %.
#pragma once

#include <cstdint>

namespace reducetune {

// Bytes per second; throws invalid_configuration when seconds ≤ 0.
[[nodiscard]] double bandwidth_bytes_per_s(std::uint64_t bytes, double seconds);

[[nodiscard]] double theoretical_peak_bytes_per_s(std::uint64_t memory_clock_khz,
                                                  std::uint64_t bus_width_bits) noexcept;

// 100 · achieved / reference; 0 when the reference is unknown (≤ 0).
[[nodiscard]] double percent_of(double achieved, double reference) noexcept;

} // namespace reducetune
