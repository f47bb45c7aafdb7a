#include "reducetune/measure/bandwidth.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

double bandwidth_bytes_per_s(std::uint64_t bytes, double seconds) {
  if (!(seconds > 0)) throw invalid_configuration("bandwidth needs a positive time");
  return static_cast<double>(bytes) / seconds;
}

double theoretical_peak_bytes_per_s(std::uint64_t memory_clock_khz,
                                    std::uint64_t bus_width_bits) noexcept {
  return 2.0 * static_cast<double>(memory_clock_khz) * 1000.0 *
         static_cast<double>(bus_width_bits) / 8.0;
}

double percent_of(double achieved, double reference) noexcept {
  return reference > 0 ? 100.0 * achieved / reference : 0.0;
}

} // namespace reducetune
