#include "reducetune/measure/evaluate.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/sample_copies.hpp"

#include <memory>
#include <vector>

namespace reducetune {
namespace {

// One launch sequence per input copy (prepared_workload rotates placements); each has its
// own scratch, so the scratch's placement is averaged too.
std::vector<std::unique_ptr<launch_sequence>>
sequences(const loaded_module &module, const launch_plan &plan, const prepared_workload &in) {
  std::vector<std::unique_ptr<launch_sequence>> seqs;
  for (std::size_t i = 0; i < in.copies(); ++i)
    seqs.push_back(
        std::make_unique<launch_sequence>(module, plan, in.spec().type, in.input(i), in.spec().n));
  return seqs;
}

evaluation measure(const compiled_program &program, const launch_plan &plan, prepared_workload &in,
                   l2_flush &flush, const device_info &device, const evaluate_options &options) {
  const workload &w = in.spec();
  const loaded_module module(program);
  auto seqs = sequences(module, plan, in);
  stream s;

  measurement m;
  m.bytes_read = w.bytes_read();
  m.launches = seqs.front()->launches();
  sampled_copies r = sample_copies([&](cudaStream_t st, std::size_t i) { seqs[i]->enqueue(st); },
                                   [&](std::size_t i) { return seqs[i]->result(); }, in, s,
                                   flush, options);
  m.check = r.before;
  if (!r.before.ok) return failure{failure_kind::wrong_result, r.before.reason};
  if (!r.after.ok) return failure{failure_kind::wrong_result, "after sampling: " + r.after.reason};
  m.cold = std::move(r.cold);
  m.hot = std::move(r.hot);

  m.bytes_per_s = bandwidth_bytes_per_s(m.bytes_read, m.cold.stats.median);
  m.percent_of_peak = percent_of(m.bytes_per_s, device.peak_bytes_per_s());
  m.percent_of_ceiling = percent_of(m.bytes_per_s, options.ceiling_bytes_per_s);
  return m;
}

} // namespace

evaluation evaluate(const compiled_program &program, const launch_plan &plan, const workload &w,
                    const device_info &device, const evaluate_options &options,
                    evaluation_cache &cache) {
  try {
    prepared_workload &in = cache.workload_for(w);
    evaluation e = measure(program, plan, in, cache.flush_for(device), device, options);
    if (const auto *f = std::get_if<failure>(&e); f && f->kind == failure_kind::wrong_result)
      in.restore_input(); // the next point must not inherit what a wrong variant wrote
    return e;
  } catch (const invalid_configuration &e) {
    return failure{failure_kind::invalid_configuration, e.what()};
  } catch (const device_error &e) {
    return failure{failure_kind::device_error, e.what()};
  } catch (const launch_error &e) {
    return failure{failure_kind::launch_error, e.what()};
  }
}

evaluation evaluate(const compiled_program &program, const launch_plan &plan, const workload &w,
                    const device_info &device, const evaluate_options &options) {
  evaluation_cache once;
  return evaluate(program, plan, w, device, options, once);
}

} // namespace reducetune
