// The inputs the half-type GPU tests reduce (gpu_test_half*): the given data patterns (every
// type has them) and, for sum, min and max, the half types' hostile ones
// (verify/half_patterns.hpp), each named by its pattern, as raw bytes of the type.
#pragma once

#include "reducetune/verify/half_patterns.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rt_test {

using named_input = std::pair<std::string, std::vector<unsigned char>>;

inline std::vector<named_input> half_inputs(reducetune::dtype t, reducetune::reduce_op o,
                                            std::uint64_t n,
                                            const std::vector<reducetune::data_pattern> &patterns,
                                            std::uint64_t seed) {
  using namespace reducetune;
  std::vector<named_input> out;
  for (const data_pattern p : patterns)
    out.emplace_back(to_string(p), generate_bytes(t, p, o, n, seed + n));
  if (o != reduce_op::prod) // the half patterns are for sum, min and max
    for (const half_pattern p : all_half_patterns())
      out.emplace_back(to_string(p), generate_half_bytes(t, p, n, 0xBF16 + n));
  return out;
}

} // namespace rt_test
