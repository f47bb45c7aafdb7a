#include "reducetune/measure/sample_copies.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/sampler.hpp"

#include <chrono>
#include <memory>

namespace reducetune {
namespace {

// Every copy once, each result poisoned with `byte` first and checked after; the first wrong
// verdict, or the last ok one.
verdict run_every_copy(const graph_replay::runner &run, const copy_check &check,
                       std::size_t copies, stream &s, const copy_poison &poison,
                       unsigned char byte) {
  verdict v;
  for (std::size_t i = 0; i < copies; ++i) {
    if (poison) poison(s.get(), i, byte);
    run(s.get(), i);
    s.synchronize();
    v = check(i);
    if (!v.ok) return v;
  }
  return v;
}

// The same, its wall time added to verify_s (evaluation_times).
verdict run_every_copy(const graph_replay::runner &run, const copy_check &check,
                       std::size_t copies, stream &s, const copy_poison &poison,
                       unsigned char byte, double &verify_s) {
  const auto begin = std::chrono::steady_clock::now();
  const verdict v = run_every_copy(run, check, copies, s, poison, byte);
  verify_s += seconds_since(begin);
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

} // namespace

sampled_copies sample_copies(const graph_replay::runner &run,
                             const std::function<const void *(std::size_t)> &result,
                             prepared_workload &in, stream &s, l2_flush &flush,
                             const evaluate_options &options, const copy_poison &poison) {
  const copy_check check = [&](std::size_t i) { return in.check(result(i), options.tolerance); };
  return sample_copies(run, check, in.copies(), s, flush, options, poison);
}

sampled_copies sample_copies(const graph_replay::runner &run, const copy_check &check,
                             std::size_t copies, stream &s, l2_flush &flush,
                             const evaluate_options &options, const copy_poison &poison) {
  sampled_copies out;
  // also the warm-up runs
  out.before = run_every_copy(run, check, copies, s, poison, POISON_BEFORE, out.verify_s);
  if (!out.before.ok) return out;

  const auto made = std::chrono::steady_clock::now();
  const auto graphs = replay_of(run, copies, s.get(), options);
  out.graphs_s = seconds_since(made);
  std::size_t next = 0;
  const auto enqueue = [&](cudaStream_t st) {
    const std::size_t i = next++ % copies;
    graphs ? graphs->launch(st, i) : run(st, i);
  };
  out.cold = sample(enqueue, s.get(), &flush, options.cold_rule);
  // an outpaced point is already known to be no best: its hot samples would only cost time
  if (options.hot && out.cold.stopped != stop_reason::outpaced)
    out.hot = sample(enqueue, s.get(), nullptr, options.hot_rule);

  out.after = run_every_copy(run, check, copies, s, poison, POISON_AFTER, out.verify_s);
  return out;
}

} // namespace reducetune
