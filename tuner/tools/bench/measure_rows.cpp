// How reducetune-bench measures a row (measure_rows.hpp): each sequence optionally captured
// once per input copy and replayed as a CUDA graph, every copy run and checked, cold samples
// (L2 flushed before each) and hot samples (back to back) rotating over the copies, then every
// copy checked again.
#include "bench/measure_rows.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/graph_replay.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/sampler.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace reducetune::bench {

namespace {

// Runs copy i of the input (prepared_workload rotates over copies at different addresses).
using copy_runner = std::function<void(cudaStream_t, std::size_t)>;
using copy_result = std::function<const void *(std::size_t)>;

// Every copy once, each result checked; the first wrong verdict, or an ok one.
verdict run_every_copy(const copy_runner &run, const copy_result &result, prepared_input &in,
                       stream &s) {
  verdict v;
  for (std::size_t i = 0; i < in.load.copies(); ++i) {
    run(s.get(), i);
    s.synchronize();
    v = in.check(result(i));
    if (!v.ok) return v;
  }
  return v;
}

row_result measure(const copy_runner &direct, const copy_result &result, prepared_input &in,
                   stream &s, l2_flush &flush, const rules &r) {
  std::unique_ptr<graph_replay> graphs;
  if (r.graph) graphs = std::make_unique<graph_replay>(direct, in.load.copies(), s.get());
  const copy_runner via_graph = [&](cudaStream_t st, std::size_t i) { graphs->launch(st, i); };
  const copy_runner &run = graphs ? via_graph : direct;
  row_result out;
  if (const verdict v = run_every_copy(run, result, in, s); !v.ok) {
    out.status = "WRONG";
    out.reason = "expected " + v.expected + ", got " + v.got + ": " + v.reason;
    return out;
  }
  std::size_t next = 0;
  const auto enqueue = [&](cudaStream_t st) { run(st, next++ % in.load.copies()); };
  out.cold = sample(enqueue, s.get(), &flush, r.cold);
  out.hot = sample(enqueue, s.get(), nullptr, r.hot);
  if (const verdict v = run_every_copy(run, result, in, s); !v.ok) {
    out.status = "WRONG";
    out.reason = "after sampling: expected " + v.expected + ", got " + v.got;
  }
  return out;
}

} // namespace

row_result measure_variant(bench_variant &v, prepared_input &in, stream &s, l2_flush &flush,
                           const rules &r) {
  try {
    std::vector<std::unique_ptr<launch_sequence>> seqs;
    for (std::size_t i = 0; i < in.load.copies(); ++i)
      seqs.push_back(
          std::make_unique<launch_sequence>(*v.module, v.plan, in.type, in.load.input(i), in.n));
    row_result out = measure([&](cudaStream_t st, std::size_t i) { seqs[i]->enqueue(st); },
                             [&](std::size_t i) { return seqs[i]->result(); }, in, s, flush, r);
    out.launches = seqs.front()->launches();
    return out;
  } catch (const error &e) {
    row_result out;
    out.status = "FAILED";
    out.reason = e.what();
    return out;
  }
}

row_result measure_cub(cub_reduce &cub, prepared_input &in, stream &s, l2_flush &flush,
                       const rules &r) {
  try {
    row_result out =
        measure([&](cudaStream_t st,
                    std::size_t i) { cub.enqueue(in.load.input(i), in.result.data(), in.n, st); },
                [&](std::size_t) { return in.result.data(); }, in, s, flush, r);
    out.launches = 1;
    return out;
  } catch (const error &e) {
    row_result out;
    out.status = "FAILED";
    out.reason = e.what();
    return out;
  }
}

} // namespace reducetune::bench
