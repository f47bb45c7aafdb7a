// A problem: what is reduced, whatever kernel reduces it (DESIGN.md, "Problems and their
// shapes"). Element type, operator, and the shape (outer, r, inner): a contiguous tensor viewed
// as outer x r x inner whose middle axis is reduced into outer x inner. Today's whole-array
// reduction of n elements is (1, n, 1); a row reduction (rows, r, 1); a column reduction
// (1, r, columns). One type for all of them, so that axis reductions are the same value with
// other numbers, and a (type, operator, n) triple never crosses a layer loose.
#pragma once

#include "reducetune/space/element.hpp"

#include <cstdint>
#include <string>

namespace reducetune {

struct reduction_shape {
  std::uint64_t outer = 1;
  std::uint64_t r = 1; // the reduced extent
  std::uint64_t inner = 1;

  friend bool operator==(const reduction_shape &, const reduction_shape &) = default;
};

struct problem {
  dtype type = dtype::float32;
  reduce_op op = reduce_op::sum;
  reduction_shape shape;

  friend bool operator==(const problem &, const problem &) = default;

  // The whole array of n elements: (1, n, 1).
  [[nodiscard]] static problem whole_array(dtype t, reduce_op o, std::uint64_t n);
  [[nodiscard]] bool is_whole_array() const noexcept {
    return shape.outer == 1 && shape.inner == 1;
  }
  // Elements read (outer x r x inner) and results written (outer x inner).
  [[nodiscard]] std::uint64_t elements() const noexcept;
  [[nodiscard]] std::uint64_t outputs() const noexcept;
  // Bytes an axis reduction moves, its elements read and its outputs written: the bandwidth
  // the axis runner prices and the reports' % of peak count.
  [[nodiscard]] std::uint64_t bytes_read_and_written() const noexcept;
};

// "float32.sum.(1,1048576,1)": printable, for messages and reports (never parsed back: a
// problem travels as this type, and the store keeps its fields in columns).
[[nodiscard]] std::string to_label(const problem &p);

// Throws invalid_configuration, one line naming the problem, when an extent is 0 or the
// element count outer x r x inner does not fit in 64 bits.
void validate(const problem &p);

} // namespace reducetune
