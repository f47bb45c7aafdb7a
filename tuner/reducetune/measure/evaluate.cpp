#include "reducetune/measure/evaluate.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/graph_replay.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/sampler.hpp"

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

// Runs every sequence once and verifies each result; the first wrong one is the verdict.
verdict run_and_verify(std::vector<std::unique_ptr<launch_sequence>> &seqs, stream &s,
                       prepared_workload &in, const evaluate_options &options) {
  verdict v;
  for (auto &seq : seqs) {
    seq->enqueue(s.get());
    s.synchronize();
    v = in.check(seq->result(), options.tolerance);
    if (!v.ok) return v;
  }
  return v;
}

// Graphs of the sequences when asked for and possible; a sequence that cannot be captured
// (a device-side launch the graph API refuses) is timed with direct launches instead.
std::unique_ptr<graph_replay> replay_of(const graph_replay::runner &run, std::size_t copies,
                                        cudaStream_t s, const evaluate_options &options) {
  if (!options.graph) return nullptr;
  try {
    return std::make_unique<graph_replay>(run, copies, s);
  } catch (const error &) {
    RT_CUDA_CALL_NOEXCEPT(cudaGetLastError()); // clear a non-sticky capture error
    return nullptr;
  }
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
  m.check = run_and_verify(seqs, s, in, options); // also the warm-up runs
  if (!m.check.ok) return failure{failure_kind::wrong_result, m.check.reason};

  const graph_replay::runner direct = [&](cudaStream_t st, std::size_t i) {
    seqs[i]->enqueue(st);
  };
  const auto graphs = replay_of(direct, seqs.size(), s.get(), options);
  std::size_t next = 0;
  const auto enqueue = [&](cudaStream_t st) {
    const std::size_t i = next++ % seqs.size();
    graphs ? graphs->launch(st, i) : direct(st, i);
  };
  m.cold = sample(enqueue, s.get(), &flush, options.cold_rule);
  if (options.hot) m.hot = sample(enqueue, s.get(), nullptr, options.hot_rule);

  // Once more after all samples: a racy variant may be right once and wrong later.
  const verdict again = run_and_verify(seqs, s, in, options);
  if (!again.ok) return failure{failure_kind::wrong_result, "after sampling: " + again.reason};

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
