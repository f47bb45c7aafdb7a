// The dispatch between grid points of the axis family (issue 26, item 4): which tuned shape
// answers a shape (outer, r, inner) that was not tuned. Decided here once; the runtime's axis
// call (runtime/axis_dispatch.cpp, table_entry) and the exported header's select_axis() both
// run this very code: the header prints shape_rule_source, the text of the definitions below
// (RT_SHAPE_RULE compiles them and keeps their text), so the two cannot drift apart.
//
// The rule, for the entries of one device, type and operator:
//   1. Only entries of the same kind answer: rows (inner == 1) and columns (inner > 1, which
//      includes middle axes) are tuned apart and never answer for each other.
//   2. An entry of exactly this shape answers first.
//   3. Else the nearest entry in the plane (log2 r, log2 outer * inner), each coordinate
//      rounded to the nearest integer (rounded_log2: an octave's boundary lies at 2^(k + 1/2),
//      decided on the extent's top 32 bits, exactly for extents below 2^32), by squared
//      Euclidean distance. The tuning grid is a log2 grid of both, so this is the nearest grid
//      point; a shape inside a grid cell gets its cell's nearest corner.
//   4. Ties go to the larger r (a longer row's point has the wider reach: its strategies also
//      split work that a short row's would not), then to more outputs, then to the earlier
//      entry (the Catalog orders them by shape, so the answer never depends on file order).
//   5. No entry of the kind: no answer; the caller's built-in rule decides (and a tuned point
//      the shape makes invalid falls back to that rule too: runtime/reducer_axis.cpp).
#pragma once

#include "reducetune/space/problem.hpp"

#include <cstddef>
#include <optional>
#include <span>

// Compiles the definitions and keeps their text (comments are gone by then) for the header.
#define RT_SHAPE_RULE(...)                                                                     \
  __VA_ARGS__                                                                                  \
  inline constexpr const char *shape_rule_source = #__VA_ARGS__;

namespace reducetune::db {

// C++17 on purpose: the exported header compiles it.
RT_SHAPE_RULE(
    constexpr int rounded_log2(unsigned long long x) {
      int k = 0;
      while ((x >> k) > 1)
        ++k;
      const unsigned long long top = k >= 31 ? x >> (k - 31) : x << (31 - k);
      return top * top >= (1ull << 63) ? k + 1 : k;
    }

    template <class Shape>
    constexpr long long shape_distance(const Shape &e, unsigned long long outer,
                                       unsigned long long r, unsigned long long inner) {
      const long long dr = rounded_log2(e.r) - rounded_log2(r);
      const long long dm = rounded_log2(e.outer * e.inner) - rounded_log2(outer * inner);
      return dr * dr + dm * dm;
    }

    template <class Shape>
    constexpr bool beats(const Shape &e, long long d, const Shape *best, long long best_d) {
      if (best == nullptr || d != best_d)
        return best == nullptr || d < best_d;
      if (e.r != best->r)
        return e.r > best->r;
      return e.outer * e.inner > best->outer * best->inner;
    }

    template <class Shape>
    constexpr const Shape *answering_shape(const Shape *first, const Shape *last,
                                         unsigned long long outer, unsigned long long r,
                                         unsigned long long inner) {
      const Shape *best = nullptr;
      long long best_d = 0;
      for (const Shape *e = first; e != last; ++e) {
        if ((e->inner == 1) != (inner == 1))
          continue;
        if (e->outer == outer && e->r == r && e->inner == inner)
          return e;
        const long long d = shape_distance(*e, outer, r, inner);
        if (beats(*e, d, best, best_d)) {
          best = e;
          best_d = d;
        }
      }
      return best;
    })

// The index of the entry of `shapes` that answers `s` by the rule above; nothing when no entry
// is of its kind.
[[nodiscard]] inline std::optional<std::size_t> nearest_shape_index(
    std::span<const reduction_shape> shapes, const reduction_shape &s) noexcept {
  const reduction_shape *e =
      answering_shape(shapes.data(), shapes.data() + shapes.size(), s.outer, s.r, s.inner);
  if (e == nullptr)
    return std::nullopt;
  return static_cast<std::size_t>(e - shapes.data());
}

} // namespace reducetune::db
