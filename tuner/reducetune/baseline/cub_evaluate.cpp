#include "reducetune/baseline/cub_baseline.hpp"

#include "reducetune/baseline/cub_reduce.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/sample_copies.hpp"

namespace reducetune {
namespace {

evaluation measure_cub(prepared_workload &in, l2_flush &flush, const device_info &device,
                       const evaluate_options &options) {
  const workload &w = in.spec();
  device_buffer out(size_of(w.type));
  cub_reduce cub(w.type, w.op, w.n);
  stream s;
  measurement m;
  m.bytes_read = w.bytes_read();
  m.launches = 1;
  sampled_copies r = sample_copies(
      [&](cudaStream_t st, std::size_t i) { cub.enqueue(in.input(i), out.data(), w.n, st); },
      [&](std::size_t) { return out.data(); }, in, s, flush, options);
  m.check = r.before;
  if (!r.before.ok) return failure{failure_kind::wrong_result, "CUB: " + r.before.reason};
  if (!r.after.ok)
    return failure{failure_kind::wrong_result, "CUB after sampling: " + r.after.reason};
  m.cold = std::move(r.cold);
  m.hot = std::move(r.hot);
  m.bytes_per_s = bandwidth_bytes_per_s(m.bytes_read, m.cold.stats.median);
  m.percent_of_peak = percent_of(m.bytes_per_s, device.peak_bytes_per_s());
  m.percent_of_ceiling = percent_of(m.bytes_per_s, options.ceiling_bytes_per_s);
  return m;
}

} // namespace

evaluation evaluate_cub(const workload &w, const device_info &device,
                        const evaluate_options &options, evaluation_cache &cache) {
  try {
    return measure_cub(cache.workload_for(w), cache.flush_for(device), device, options);
  } catch (const device_error &e) {
    return failure{failure_kind::device_error, e.what()};
  } catch (const launch_error &e) {
    return failure{failure_kind::launch_error, e.what()};
  }
}

evaluation evaluate_cub(const workload &w, const device_info &device,
                        const evaluate_options &options) {
  evaluation_cache once;
  return evaluate_cub(w, device, options, once);
}

} // namespace reducetune
