#include "reducetune/space/problem.hpp"

#include "reducetune/errors.hpp"

#include <limits>

namespace reducetune {

problem problem::whole_array(dtype t, reduce_op o, std::uint64_t n) {
  return {t, o, {1, n, 1}};
}

std::uint64_t problem::elements() const noexcept { return shape.outer * shape.r * shape.inner; }

std::uint64_t problem::outputs() const noexcept { return shape.outer * shape.inner; }

std::uint64_t problem::bytes_read_and_written() const noexcept {
  return (elements() + outputs()) * size_of(type);
}

std::string to_label(const problem &p) {
  return std::string{to_string(p.type)} + "." + to_string(p.op) + ".(" +
         std::to_string(p.shape.outer) + "," + std::to_string(p.shape.r) + "," +
         std::to_string(p.shape.inner) + ")";
}

void validate(const problem &p) {
  const reduction_shape &s = p.shape;
  if (s.outer == 0 || s.r == 0 || s.inner == 0)
    throw invalid_configuration("problem " + to_label(p) +
                                ": every extent of the shape (outer, r, inner) must be >= 1");
  constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
  if (s.r > most / s.outer || s.inner > most / (s.outer * s.r))
    throw invalid_configuration("problem " + to_label(p) +
                                ": outer x r x inner does not fit in 64 bits");
}

} // namespace reducetune
