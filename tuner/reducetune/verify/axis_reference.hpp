// Verification of an axis reduction (a contiguous (outer, r, inner) tensor reduced over r into
// (outer, inner)): every output checked against the host reference of its own row, with the
// whole-array verifier's rules (verify.hpp: integers exact, floats within the γ bound of
// Σ|x| around a compensated long-double sum, IEEE special values).
#pragma once

#include "reducetune/space/problem.hpp"
#include "reducetune/verify/verify.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace reducetune {

struct axis_verdict {
  std::uint64_t outputs = 0; // outer * inner, every one checked
  std::uint64_t failed = 0;
  // The first failures, "output (o, i): expected E, got G (reason)", for messages.
  std::vector<std::string> failures;

  [[nodiscard]] bool ok() const noexcept { return failed == 0; }
  [[nodiscard]] std::string summary() const;
};

// The elements of output (o, i): in[(o * r + k) * inner + i] for k in [0, r), copied out.
template <class T>
[[nodiscard]] std::vector<T> axis_row(const T *in, const reduction_shape &s, std::uint64_t o,
                                      std::uint64_t i);

// The reference of every output of one (problem, input), computed once, then any number of
// results checked against it (a GPU test checks every point of the family on one input).
class axis_reference {
public:
  // `in` holds outer * r * inner elements of p.type. Throws invalid_configuration for a
  // problem validate() refuses.
  axis_reference(const problem &p, const void *in);

  // `got` holds outer * inner elements of p.type (floats for a half type when
  // options.float32_output); options.depth bounds each output's summation depth.
  [[nodiscard]] axis_verdict check(const void *got, std::size_t max_reported = 8,
                                   tolerance_options options = {}) const;
  [[nodiscard]] const problem &of() const noexcept { return m_problem; }

private:
  [[nodiscard]] axis_verdict check_chunk(const unsigned char *results, std::uint64_t c,
                                         std::uint64_t begin, std::size_t max_reported,
                                         const tolerance_options &options) const;

  problem m_problem;
  // Output j = o * inner + i is m_chunks[j / chunk_elements][j % chunk_elements]: each chunk
  // built on the thread that fills it (verify/chunks.hpp), with no zeroing pass before (one
  // vector of 2^27 outputs, 14 GiB, took 32 s to size on one thread of the build machine).
  std::vector<std::vector<prepared_reference>> m_chunks;
};

// axis_reference(p, in).check(got): for one result.
[[nodiscard]] axis_verdict verify_axis(const problem &p, const void *in, const void *got,
                                       std::size_t max_reported = 8);

} // namespace reducetune
