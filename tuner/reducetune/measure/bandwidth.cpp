#include "reducetune/measure/bandwidth.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

double bandwidth_bytes_per_s(std::uint64_t bytes, double seconds) {
  if (!(seconds > 0)) throw invalid_configuration("bandwidth needs a positive time");
  return static_cast<double>(bytes) / seconds;
}

double percent_of(double achieved, double reference) noexcept {
  return reference > 0 ? 100.0 * achieved / reference : 0.0;
}

} // namespace reducetune
