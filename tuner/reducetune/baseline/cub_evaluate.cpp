#include "reducetune/baseline/cub_baseline.hpp"

#include "reducetune/baseline/cub_reduce.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/graph_replay.hpp"

#include <memory>
#include "reducetune/measure/sampler.hpp"

namespace reducetune {
namespace {

evaluation measure_cub(prepared_workload &in, l2_flush &flush, const device_info &device,
                       const evaluate_options &options) {
  const workload &w = in.spec();
  device_buffer out(size_of(w.type));
  cub_reduce cub(w.type, w.op, w.n);
  stream s;
  const graph_replay::runner direct = [&](cudaStream_t st, std::size_t i) {
    cub.enqueue(in.input(i), out.data(), w.n, st);
  };
  std::unique_ptr<graph_replay> graphs; // replayed as graphs, as variants are (evaluate.hpp)
  std::size_t next = 0; // rotates over the input copies, as variants do (prepared_workload)
  const auto enqueue = [&](cudaStream_t st) {
    const std::size_t i = next++ % in.copies();
    graphs ? graphs->launch(st, i) : direct(st, i);
  };

  measurement m;
  m.bytes_read = w.bytes_read();
  m.launches = 1;
  for (std::size_t i = 0; i < in.copies(); ++i) { // also the warm-up runs
    enqueue(s.get());
    s.synchronize();
    m.check = in.check(out.data(), options.tolerance);
    if (!m.check.ok) return failure{failure_kind::wrong_result, "CUB: " + m.check.reason};
  }

  if (options.graph) graphs = std::make_unique<graph_replay>(direct, in.copies(), s.get());
  m.cold = sample(enqueue, s.get(), &flush, options.cold_rule);
  if (options.hot) m.hot = sample(enqueue, s.get(), nullptr, options.hot_rule);
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
