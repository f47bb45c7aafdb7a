// A workload: what is reduced (type, operator, n, data pattern and seed) and where the input
// starts (offset_elements > 0 gives an input that is not 16-byte aligned).
#pragma once

#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/types.hpp"

#include <cstdint>

namespace reducetune {

struct workload {
  dtype type = dtype::float32;
  reduce_op op = reduce_op::sum;
  std::uint64_t n = 1 << 20;
  data_pattern pattern = data_pattern::uniform;
  std::uint64_t seed = default_data_seed;
  unsigned offset_elements = 0; // the runner passes in + offset_elements

  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return n * size_of(type); }
};

} // namespace reducetune
