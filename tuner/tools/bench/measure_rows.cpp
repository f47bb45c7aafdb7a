// How reducetune-bench measures a row (measure_rows.hpp): the runner's recipe
// (measure/sample_copies.hpp: every copy checked, graph replay, cold and hot samples rotating
// over the copies, every copy checked again), reported as a row.
#include "bench/measure_rows.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/sample_copies.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace reducetune::bench {

namespace {

using copy_runner = graph_replay::runner;
using copy_result = std::function<const void *(std::size_t)>;

// The runner's recipe (measure/sample_copies.hpp) with the bench's rules, as a table row.
row_result measure(const copy_runner &run, const copy_result &result, prepared_input &in,
                   stream &s, l2_flush &flush, const rules &r, const copy_poison &poison = {}) {
  evaluate_options options;
  options.cold_rule = r.cold;
  options.hot_rule = r.hot;
  options.hot = true;
  options.graph = r.graph;
  sampled_copies sampled = sample_copies(run, result, in.load, s, flush, options, poison);
  row_result out;
  if (const verdict &v = sampled.before; !v.ok) {
    out.status = "WRONG";
    out.reason = "expected " + v.expected + ", got " + v.got + ": " + v.reason;
    return out;
  }
  out.cold = std::move(sampled.cold);
  out.hot = std::move(sampled.hot);
  if (const verdict &v = sampled.after; !v.ok) {
    out.status = "WRONG";
    out.reason = "after sampling: expected " + v.expected + ", got " + v.got;
  }
  return out;
}

row_result failed_row(const error &e) {
  row_result out;
  out.status = "FAILED";
  out.reason = e.what();
  return out;
}

} // namespace

row_result measure_variant(bench_variant &v, prepared_input &in, stream &s, l2_flush &flush,
                           const rules &r) {
  try {
    const workload &w = in.load.spec();
    std::vector<std::unique_ptr<launch_sequence>> seqs;
    for (std::size_t i = 0; i < in.load.copies(); ++i)
      seqs.push_back(
          std::make_unique<launch_sequence>(*v.module, v.plan, w.type, in.load.input(i), w.n));
    row_result out = measure(
        [&](cudaStream_t st, std::size_t i) { seqs[i]->enqueue(st); },
        [&](std::size_t i) { return seqs[i]->result(); }, in, s, flush, r,
        [&](cudaStream_t st, std::size_t i, unsigned char byte) { seqs[i]->poison(st, byte); });
    out.launches = seqs.front()->launches();
    return out;
  } catch (const error &e) {
    return failed_row(e);
  }
}

row_result measure_cub(cub_reduce &cub, prepared_input &in, stream &s, l2_flush &flush,
                       const rules &r) {
  try {
    const std::uint64_t n = in.load.spec().n;
    row_result out = measure(
        [&](cudaStream_t st, std::size_t i) {
          cub.enqueue(in.load.input(i), in.result.data(), n, st);
        },
        [&](std::size_t) { return in.result.data(); }, in, s, flush, r);
    out.launches = 1;
    return out;
  } catch (const error &e) {
    return failed_row(e);
  }
}

} // namespace reducetune::bench
