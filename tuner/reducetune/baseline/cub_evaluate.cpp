#include "reducetune/baseline/cub_baseline.hpp"

#include "reducetune/baseline/cub_reduce.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
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
