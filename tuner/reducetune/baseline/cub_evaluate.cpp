#include "reducetune/baseline/cub_baseline.hpp"

#include "reducetune/baseline/cub_reduce.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/measure/sample_copies.hpp"

namespace reducetune {
namespace {

evaluation measure_cub(prepared_workload &in, l2_flush &flush, const device_info &device,
                       const evaluate_options &options) {
  const workload &w = in.spec();
  device_buffer out(size_of(w.type));
  cub_reduce cub(w.type, w.op, w.n);
  stream s;
  sampled_copies r = sample_copies(
      [&](cudaStream_t st, std::size_t i) { cub.enqueue(in.input(i), out.data(), w.n, st); },
      [&](std::size_t) { return out.data(); }, in, s, flush, options);
  return measurement_of(std::move(r), w, 1, device, options, "CUB");
}

} // namespace

// Through measure_on, as a variant is measured: CUB's result then carries prepare_s, the time
// its call spends making the workload ready (host data, reference, input copies; the tuner asks
// CUB first in each unit, so that is where a unit's data is made) and CUB's own temporary
// storage. Without it that time was nowhere in the result's times: on an H200, 72 of the 102 s
// a two-minute tune spent measuring showed as "other" (tuning/timing.py).
evaluation evaluate_cub(const workload &w, const device_info &device,
                        const evaluate_options &options, evaluation_cache &cache) {
  // CUB's call marks no setup or teardown on the clock: its prepare_s is the unit's workload
  return measure_on(w, cache, [&](prepared_workload &in, prepare_clock &) {
    return measure_cub(in, cache.flush_for(device), device, options);
  });
}

evaluation evaluate_cub(const workload &w, const device_info &device,
                        const evaluate_options &options) {
  evaluation_cache once;
  return evaluate_cub(w, device, options, once);
}

} // namespace reducetune
