#include "reducetune/verify/axis_reference.hpp"

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

axis_reference::axis_reference(const problem &p, const void *in) : m_problem(p) {
  validate(p);
  m_outputs.reserve(p.outputs());
  visit_dtype(p.type, [&](auto zero) {
    using T = decltype(zero);
    const T *data = static_cast<const T *>(in);
    for (std::uint64_t o = 0; o < p.shape.outer; ++o)
      for (std::uint64_t i = 0; i < p.shape.inner; ++i) {
        const std::vector<T> row = axis_row(data, p.shape, o, i);
        m_outputs.emplace_back(p.type, p.op, row.data(), row.size());
      }
  });
}

axis_verdict axis_reference::check(const void *got, std::size_t max_reported,
                                   tolerance_options options) const {
  axis_verdict out;
  out.outputs = m_outputs.size();
  const std::size_t bytes = options.float32_output ? sizeof(float) : size_of(m_problem.type);
  const auto *results = static_cast<const unsigned char *>(got);
  for (std::uint64_t j = 0; j < m_outputs.size(); ++j) {
    const verdict v = m_outputs[j].check(results + j * bytes, options);
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

axis_verdict verify_axis(const problem &p, const void *in, const void *got,
                         std::size_t max_reported) {
  return axis_reference(p, in).check(got, max_reported);
}

} // namespace reducetune
