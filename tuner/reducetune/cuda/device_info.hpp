// What identifies a device and bounds its performance, read from the runtime's attributes;
// stored with every measurement so that results from another device, driver or toolkit never
// mix silently.
#pragma once

#include <cstdint>
#include <string>

namespace reducetune {

struct device_info {
  int ordinal = 0;
  std::string name;
  std::string uuid;          // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  int bus_width_bits = 0;
  std::uint64_t memory_clock_khz = 0;
  std::uint64_t global_memory_bytes = 0;
  int max_threads_per_block = 0;
  std::uint64_t max_shared_per_block = 0; // opt-in maximum (dynamic shared may use it all)
  int driver_version = 0;    // e.g. 13000 for 13.0
  int runtime_version = 0;   // the toolkit the library was built with

  [[nodiscard]] int arch() const noexcept { return cc_major * 10 + cc_minor; } // 90 for sm_90
  // theoretical_peak_bytes_per_s of this device.
  [[nodiscard]] double peak_bytes_per_s() const noexcept;
};

// 2 × memory clock × bus width ÷ 8 (double data rate; clock in kHz and bus width in bits, as
// cudaDevAttrMemoryClockRate / cudaDevAttrGlobalMemoryBusWidth give them), in bytes per second.
// Here, below measure/, because the device's own description needs it.
[[nodiscard]] double theoretical_peak_bytes_per_s(std::uint64_t memory_clock_khz,
                                                  std::uint64_t bus_width_bits) noexcept;

// Throws device_error when there is no usable device.
[[nodiscard]] device_info query_device(int ordinal = 0);

} // namespace reducetune
