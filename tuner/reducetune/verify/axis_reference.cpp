#include "reducetune/verify/axis_reference.hpp"

#include "reducetune/verify/chunks.hpp"
#include "reducetune/verify/types.hpp"

namespace reducetune {

std::string axis_verdict::summary() const {
  std::string out = std::to_string(failed) + " of " + std::to_string(outputs) + " outputs wrong";
  for (const auto &f : failures) out += "\n  " + f;
  return out;
}

template <class T>
std::vector<T> axis_row(const T *in, const reduction_shape &s, std::uint64_t o, std::uint64_t i) {
  std::vector<T> row(s.r);
  const T *p = in + o * s.r * s.inner + i;
  for (std::uint64_t k = 0; k < s.r; ++k) row[k] = p[k * s.inner];
  return row;
}

template std::vector<int> axis_row(const int *, const reduction_shape &, std::uint64_t,
                                   std::uint64_t);
template std::vector<long long> axis_row(const long long *, const reduction_shape &, std::uint64_t,
                                         std::uint64_t);
template std::vector<float> axis_row(const float *, const reduction_shape &, std::uint64_t,
                                     std::uint64_t);
template std::vector<double> axis_row(const double *, const reduction_shape &, std::uint64_t,
                                      std::uint64_t);
template std::vector<float16> axis_row(const float16 *, const reduction_shape &, std::uint64_t,
                                       std::uint64_t);
template std::vector<bfloat16> axis_row(const bfloat16 *, const reduction_shape &,
                                        std::uint64_t, std::uint64_t);

namespace {

// The reference of output (o, i): a row of inner == 1 is contiguous and read in place; a
// column is gathered first (axis_row).
template <class T>
prepared_reference output_reference(const problem &p, const T *data, std::uint64_t j) {
  const std::uint64_t o = j / p.shape.inner, i = j % p.shape.inner;
  if (p.shape.inner == 1) return {p.type, p.op, data + o * p.shape.r, p.shape.r};
  const std::vector<T> row = axis_row(data, p.shape, o, i);
  return {p.type, p.op, row.data(), row.size()};
}

} // namespace

// Every output's reference on the chunk threads (verify/chunks.hpp): one thread took 74.6 s for
// 2^27 float32 rows of 2 on the build machine (issue 26). Rows over 2^20 elements start threads
// of their own, but then there are fewer than 2^20 outputs: one chunk, run on this thread.
axis_reference::axis_reference(const problem &p, const void *in) : m_problem(p) {
  validate(p);
  m_chunks.resize(chunks_of(p.outputs()));
  visit_dtype(p.type, [&](auto zero) {
    using T = decltype(zero);
    const T *data = static_cast<const T *>(in);
    for_each_chunk(p.outputs(), [&](std::uint64_t c, std::uint64_t begin, std::uint64_t end) {
      std::vector<prepared_reference> &chunk = m_chunks[c];
      chunk.reserve(end - begin);
      for (std::uint64_t j = begin; j < end; ++j) chunk.push_back(output_reference(p, data, j));
    });
  });
}

// Chunk c's outputs, from output `begin`, checked: their failures counted and the first
// max_reported described.
axis_verdict axis_reference::check_chunk(const unsigned char *results, std::uint64_t c,
                                         std::uint64_t begin, std::size_t max_reported,
                                         const tolerance_options &options) const {
  axis_verdict out;
  const std::size_t bytes = options.float32_output ? sizeof(float) : size_of(m_problem.type);
  const std::vector<prepared_reference> &chunk = m_chunks[c];
  for (std::uint64_t j = begin; j < begin + chunk.size(); ++j) {
    const verdict v = chunk[j - begin].check(results + j * bytes, options, false);
    if (v.ok) continue;
    ++out.failed;
    if (out.failures.size() < max_reported)
      out.failures.push_back("output (" + std::to_string(j / m_problem.shape.inner) + ", " +
                             std::to_string(j % m_problem.shape.inner) + "): expected " +
                             v.expected + ", got " + v.got +
                             (v.reason.empty() ? "" : " (" + v.reason + ")"));
  }
  return out;
}

// The outputs' chunks checked on the chunk threads, their verdicts merged in chunk order: the
// same count and the same first failures as one pass. One thread took 93.6 s for 2^27 outputs
// on the build machine, most of it printing each passing verdict's expected and got values.
axis_verdict axis_reference::check(const void *got, std::size_t max_reported,
                                   tolerance_options options) const {
  const auto *results = static_cast<const unsigned char *>(got);
  std::vector<axis_verdict> parts(m_chunks.size());
  for_each_chunk(m_problem.outputs(), [&](std::uint64_t c, std::uint64_t begin, std::uint64_t) {
    parts[c] = check_chunk(results, c, begin, max_reported, options);
  });
  axis_verdict out;
  out.outputs = m_problem.outputs();
  for (axis_verdict &part : parts) {
    out.failed += part.failed;
    for (std::string &f : part.failures)
      if (out.failures.size() < max_reported) out.failures.push_back(std::move(f));
  }
  return out;
}

axis_verdict verify_axis(const problem &p, const void *in, const void *got,
                         std::size_t max_reported) {
  return axis_reference(p, in).check(got, max_reported);
}

} // namespace reducetune
