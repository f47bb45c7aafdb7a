#include "reducetune/measure/prepared_workload.hpp"

#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <future>

namespace reducetune {

std::shared_ptr<host_data> make_host_data(const workload &w, std::shared_ptr<host_data> spare) {
  const std::uint64_t need = w.n * size_of(w.type);
  if (!spare || spare.use_count() > 1 || spare->capacity < need) {
    spare.reset(); // the old bytes freed before the new ones are allocated
    spare = std::make_shared<host_data>();
    spare->bytes.reset(new unsigned char[need]); // uninitialised: see host_data
    spare->capacity = need;
  }
  spare->type = w.type;
  spare->pattern = w.pattern;
  spare->product = w.op == reduce_op::prod;
  spare->seed = w.seed;
  spare->n = 0; // serves nothing while it is being generated (generate_into may throw)
  generate_into(spare->bytes.get(), w.type, w.pattern, w.op, w.n, w.seed);
  spare->n = w.n;
  return spare;
}

bool host_data::serves(const workload &w) const noexcept {
  // A product's data depends on n (its sparse factors are spaced by n / 64): exact n only.
  const bool product_of = w.op == reduce_op::prod;
  return w.type == type && w.pattern == pattern && product_of == product && w.seed == seed &&
         (product ? w.n == n : w.n <= n);
}

prepared_workload::prepared_workload(const workload &w) : prepared_workload(w, make_host_data(w)) {
}

namespace {

std::shared_ptr<const host_data> serving(std::shared_ptr<const host_data> data, const workload &w) {
  if (!data || !data->serves(w)) // before any reference reads past its bytes
    throw invalid_configuration("prepared_workload: the host data does not hold this workload");
  return data;
}

// w's reference computed on other threads (verify/chunks.hpp) while `upload` runs on this one.
// Why: a copy from pageable memory keeps one core busy for seconds at 2^30 (the CUDA driver
// stages it), and the reference's threads read the same host bytes meanwhile; one after the
// other, a unit's preparation was their sum. If upload throws, the reference is waited for.
template <class Upload>
prepared_reference reference_beside(const workload &w, const host_data &d, Upload upload) {
  auto reference = std::async(std::launch::async, [&w, &d] {
    return prepared_reference(w.type, w.op, d.bytes.get(), w.n);
  });
  upload();
  return reference.get();
}

} // namespace

prepared_workload::prepared_workload(const workload &w, std::shared_ptr<const host_data> data)
    : m_spec(w), m_host(serving(std::move(data), w)),
      m_reference(reference_beside(w, *m_host, [this] {
        const std::size_t bytes = (m_spec.n + m_spec.offset_elements) * size_of(m_spec.type);
        const std::size_t k = copies_for(bytes);
        for (std::size_t i = 0; i < k; ++i) m_inputs.emplace_back(bytes);
        restore_input();
      })) {
}

prepared_workload::prepared_workload(const workload &w, std::shared_ptr<const host_data> data,
                                     prepared_workload &&before)
    : m_spec(w), m_host(serving(std::move(data), w)), m_inputs(take_inputs(before, w)),
      m_reference(w.type, w.op, m_host->bytes.get(), w.n) {
}

std::vector<device_buffer> prepared_workload::take_inputs(prepared_workload &before,
                                                          const workload &w) {
  // Asked before the move: after it, before.copies() is 0 and no w is served (399a387 asked
  // after, and every reuse threw: in a tune, CUB's first call of each unit failed).
  if (!before.input_serves(w))
    throw invalid_configuration("prepared_workload: the device input is not this workload's");
  return std::move(before.m_inputs);
}

std::size_t prepared_workload::copies_for(std::uint64_t input_bytes) noexcept {
  constexpr std::uint64_t rotation_bytes = 256ULL << 20;
  constexpr std::uint64_t most = 8;
  if (input_bytes == 0) return 1;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(rotation_bytes / input_bytes, 1, most));
}

void prepared_workload::restore_input() {
  for (auto &b : m_inputs)
    b.upload(m_host->bytes.get(), m_spec.n * size_of(m_spec.type),
             m_spec.offset_elements * size_of(m_spec.type));
}

const void *prepared_workload::input(std::size_t i) const noexcept {
  return static_cast<const char *>(m_inputs[i].data()) +
         m_spec.offset_elements * size_of(m_spec.type);
}

bool prepared_workload::holds(const workload &w) const noexcept {
  return w.type == m_spec.type && w.op == m_spec.op && w.n == m_spec.n &&
         w.pattern == m_spec.pattern && w.seed == m_spec.seed &&
         w.offset_elements == m_spec.offset_elements;
}

bool prepared_workload::input_serves(const workload &w) const noexcept {
  return w.type == m_spec.type && w.n <= m_spec.n && w.pattern == m_spec.pattern &&
         w.seed == m_spec.seed && w.offset_elements == m_spec.offset_elements &&
         w.op != reduce_op::prod && m_spec.op != reduce_op::prod &&
         copies_for((w.n + w.offset_elements) * size_of(w.type)) == copies();
}

verdict prepared_workload::check(const void *result, const tolerance_options &options) {
  std::string got(size_of(m_spec.type), '\0');
  // Default: the host protocol leaves its result in page-locked host memory
  RT_CUDA_CALL(cudaMemcpy(got.data(), result, got.size(), cudaMemcpyDefault));
  auto key = std::make_pair(options.depth, std::move(got));
  if (const auto it = m_seen.find(key); it != m_seen.end()) return it->second;
  verdict v = m_reference.check(key.second.data(), options);
  m_seen.emplace(std::move(key), v);
  return v;
}

prepared_workload &evaluation_cache::workload_for(const workload &w) {
  if (m_workload && !m_workload->holds(w) && m_workload->input_serves(w) && m_data &&
      m_data->serves(w)) {
    // another operator or a smaller size of the same input: its device copies kept, its own
    // reference (taken out first, so that a throw leaves no workload rather than one without
    // copies)
    auto before = std::move(m_workload);
    m_workload = std::make_unique<prepared_workload>(w, m_data, std::move(*before));
  } else if (!m_workload || !m_workload->holds(w)) {
    m_workload.reset(); // free the old input before allocating the new one
    if (!m_data || !m_data->serves(w)) m_data = make_host_data(w, std::move(m_data));
    m_workload = std::make_unique<prepared_workload>(w, m_data);
  }
  return *m_workload;
}

l2_flush &evaluation_cache::flush_for(const device_info &device) {
  if (!m_flush || m_flush_l2_bytes != device.l2_bytes) {
    m_flush.reset();
    m_flush = std::make_unique<l2_flush>(device.l2_bytes);
    m_flush_l2_bytes = device.l2_bytes;
  }
  return *m_flush;
}

void evaluation_cache::clear() noexcept {
  m_workload.reset();
  m_data.reset();
  m_flush.reset();
  m_flush_l2_bytes = 0;
}

} // namespace reducetune
