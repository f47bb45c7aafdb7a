#include "reducetune/baseline/cub_baseline.hpp"

#include "reducetune/baseline/cub_reduce.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/sampler.hpp"

#include <vector>

namespace reducetune {
namespace {

evaluation measure_cub(const workload &w, const device_info &device,
                       const evaluate_options &options) {
  const auto host = generate_bytes(w.type, w.pattern, w.op, w.n, w.seed);
  const std::size_t elem = size_of(w.type);
  device_buffer input((w.n + w.offset_elements) * elem), out(elem);
  input.upload(host.data(), host.size(), w.offset_elements * elem);
  const void *in = static_cast<const char *>(input.data()) + w.offset_elements * elem;
  cub_reduce cub(w.type, w.op, w.n);
  stream s;
  const auto enqueue = [&](cudaStream_t st) { cub.enqueue(in, out.data(), w.n, st); };

  measurement m;
  m.bytes_read = w.bytes_read();
  m.launches = 1;
  enqueue(s.get());
  s.synchronize();
  std::vector<unsigned char> got(elem);
  out.download(got.data(), elem);
  m.check = verify(w.type, w.op, host.data(), w.n, got.data(), options.tolerance);
  if (!m.check.ok) return failure{failure_kind::wrong_result, "CUB: " + m.check.reason};

  l2_flush flush(device.l2_bytes);
  m.cold = sample(enqueue, s.get(), &flush, options.cold_rule);
  if (options.hot) m.hot = sample(enqueue, s.get(), nullptr, options.hot_rule);
  m.bytes_per_s = bandwidth_bytes_per_s(m.bytes_read, m.cold.stats.median);
  m.percent_of_peak = percent_of(m.bytes_per_s, device.peak_bytes_per_s());
  m.percent_of_ceiling = percent_of(m.bytes_per_s, options.ceiling_bytes_per_s);
  return m;
}

} // namespace

evaluation evaluate_cub(const workload &w, const device_info &device,
                        const evaluate_options &options) {
  try {
    return measure_cub(w, device, options);
  } catch (const device_error &e) {
    return failure{failure_kind::device_error, e.what()};
  } catch (const launch_error &e) {
    return failure{failure_kind::launch_error, e.what()};
  }
}

} // namespace reducetune
