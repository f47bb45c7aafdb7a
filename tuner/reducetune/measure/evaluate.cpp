#include "reducetune/measure/evaluate.hpp"

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/axis_runner.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/sample_copies.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace reducetune {
namespace {

// One launch sequence per input copy (prepared_workload rotates placements); each has its
// own scratch, so the scratch's placement is averaged too. The runner asks the one planner
// (space/reduction_plan.hpp) and hands each sequence its steps with the plan's kernels,
// protocol and flags, without the grid rule: the sequence launches these grids and cannot
// plan others.
std::vector<std::unique_ptr<launch_sequence>>
sequences(const loaded_module &module, const launch_plan &plan, const prepared_workload &in) {
  const workload &w = in.spec();
  const reduction_plan steps =
      plan_reduction_steps(plan.proto, plan.grid_for, w.n, size_of(w.type), plan.in_place);
  launch_plan kernels = plan;
  kernels.grid_for = nullptr;
  std::vector<std::unique_ptr<launch_sequence>> seqs;
  for (std::size_t i = 0; i < in.copies(); ++i)
    seqs.push_back(
        std::make_unique<launch_sequence>(module, kernels, steps, w.type, in.input(i), w.n));
  return seqs;
}

evaluation measure(const compiled_program &program, const launch_plan &plan, prepared_workload &in,
                   l2_flush &flush, const device_info &device, const evaluate_options &options,
                   prepare_clock &clock) {
  const loaded_module module(program);
  auto seqs = sequences(module, plan, in);
  stream s;
  clock.ready();
  sampled_copies r = sample_copies(
      [&](cudaStream_t st, std::size_t i) { seqs[i]->enqueue(st); },
      [&](std::size_t i) { return seqs[i]->result(); }, in, s, flush, options,
      [&](cudaStream_t st, std::size_t i, unsigned char byte) { seqs[i]->poison(st, byte); });
  evaluation e = measurement_of(std::move(r), in.spec(), seqs.front()->launches(), device, options);
  clock.done();
  return e;
}

// What a runner of one kernel ABI is given: the point as the space planned it.
struct planned_point {
  const search_space &space;
  const problem &pr;
  const point &p;
  const input_data &data;
};

using abi_runner = std::function<evaluation(const planned_point &, compiler &, const device_info &,
                                            const evaluate_options &, evaluation_cache &)>;

// The point's program, or its compile_error failure: a variant that does not compile is a
// failed point. compile_s: the compiler's time (NVRTC, or its cache's lookup), which the
// failure carries too.
std::variant<std::shared_ptr<const compiled_program>, failure>
compiled(const planned_point &pp, compiler &jit, const device_info &device, double &compile_s) {
  const auto begin = std::chrono::steady_clock::now();
  try {
    auto program = jit.compile(request_for(pp.space.decl(), pp.p.compile, device.arch()));
    compile_s = seconds_since(begin);
    return program;
  } catch (const compile_error &e) {
    compile_s = seconds_since(begin);
    return failure{failure_kind::compile_error, e.what(), {.compile_s = compile_s}};
  }
}

// e with the compile time of its program added to its times.
evaluation with_compile_time(evaluation e, double compile_s) {
  times_of(e).compile_s += compile_s;
  return e;
}

evaluation run_whole_array(const planned_point &pp, compiler &jit, const device_info &device,
                           const evaluate_options &options, evaluation_cache &cache) {
  if (!pp.pr.is_whole_array())
    return failure{failure_kind::invalid_configuration, "family '" + pp.space.decl().name +
                                                            "' reduces whole arrays, not " +
                                                            to_label(pp.pr)};
  const launch_plan plan = pp.space.plan_launch(pp.p.compile, pp.p.launch);
  double compile_s = 0;
  auto program = compiled(pp, jit, device, compile_s);
  if (auto *f = std::get_if<failure>(&program)) return *f;
  return with_compile_time(evaluate(*std::get<0>(program), plan, workload_of(pp.pr, pp.data),
                                    device, options, cache),
                           compile_s);
}

// The axis ABI: the point planned at the problem's shape (a grid the shape puts out of range
// is a failed point), compiled, then measured by measure/axis_runner.
evaluation run_axis(const planned_point &pp, compiler &jit, const device_info &device,
                    const evaluate_options &options, evaluation_cache &cache) {
  if (const std::string why = axis_refusal(pp.space, pp.pr); !why.empty())
    return failure{failure_kind::invalid_configuration, why};
  axis_plan plan;
  try {
    plan = plan_axis(pp.space, pp.p, pp.pr.shape);
  } catch (const invalid_configuration &e) {
    return failure{failure_kind::invalid_configuration, e.what()};
  }
  double compile_s = 0;
  auto program = compiled(pp, jit, device, compile_s);
  if (auto *f = std::get_if<failure>(&program)) return *f;
  return with_compile_time(
      evaluate_axis(*std::get<0>(program), plan, pp.pr, pp.data, device, options, cache),
      compile_s);
}

// The runner of each kernel ABI (family.json "abi"); a new ABI's runner joins here, and
// nothing above evaluate() changes.
const std::map<std::string, abi_runner> &runners() {
  static const std::map<std::string, abi_runner> table{{"whole_array", run_whole_array},
                                                       {"axis", run_axis}};
  return table;
}

} // namespace

workload workload_of(const problem &pr, const input_data &data) {
  workload w;
  w.type = pr.type;
  w.op = pr.op;
  w.n = pr.elements();
  w.pattern = data.pattern;
  w.seed = data.seed;
  w.offset_elements = data.offset_elements;
  return w;
}

void require_point_for(const family &f, const point &p, const problem &pr) {
  validate(pr);
  if (p.compile.type != pr.type || p.compile.op != pr.op)
    throw invalid_configuration("point " + variant_label(f, p) + " is not for the problem " +
                                to_label(pr));
}

evaluation evaluate(const search_space &space, const problem &pr, const point &p,
                    const input_data &data, compiler &jit, const device_info &device,
                    const evaluate_options &options, evaluation_cache &cache) {
  require_point_for(space.decl(), p, pr);
  if (space.type() != pr.type || space.op() != pr.op)
    throw invalid_configuration(std::string{"a space of "} + to_string(space.type()) + " " +
                                to_string(space.op()) + " does not measure " + to_label(pr));
  if (const auto verdict = space.check(p); !verdict)
    return failure{failure_kind::invalid_configuration, verdict.reasons()};
  const auto runner = runners().find(space.decl().abi);
  if (runner == runners().end())
    return failure{failure_kind::invalid_configuration,
                   "no runner measures the '" + space.decl().abi + "' kernel ABI of family '" +
                       space.decl().name + "' yet"};
  return runner->second({space, pr, p, data}, jit, device, options, cache);
}

evaluation evaluate(const compiled_program &program, const launch_plan &plan, const workload &w,
                    const device_info &device, const evaluate_options &options,
                    evaluation_cache &cache) {
  return measure_on(w, cache, [&](prepared_workload &in, prepare_clock &clock) {
    return measure(program, plan, in, cache.flush_for(device), device, options, clock);
  });
}

evaluation
measure_on(const workload &w, evaluation_cache &cache,
           const std::function<evaluation(prepared_workload &, prepare_clock &)> &measure) {
  const auto begin = std::chrono::steady_clock::now();
  try {
    prepared_workload &in = cache.workload_for(w);
    const double workload_s = seconds_since(begin);
    prepare_clock clock;
    evaluation e = measure(in, clock); // its resources destroyed on return: the teardown
    clock.stamp(e);
    if (const auto *f = std::get_if<failure>(&e); f && f->kind == failure_kind::wrong_result)
      in.restore_input(); // the next point must not inherit what a wrong variant wrote
    // what is neither sampling nor verifying: the workload (from the cache, or made), the
    // module loaded, the sequences' buffers and graphs, a wrong result's input restored
    evaluation_times &t = times_of(e);
    t.prepare_s = std::max(0.0, seconds_since(begin) - t.sampling_s - t.verify_s);
    t.workload_s = workload_s;
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

evaluation measurement_of(sampled_copies &&r, const workload &w, unsigned launches,
                          const device_info &device, const evaluate_options &options,
                          const std::string &who) {
  const std::string named = who.empty() ? "" : who + ": ";
  const std::string after = who.empty() ? "after sampling: " : who + " after sampling: ";
  const evaluation_times spent{.sampling_s = r.cold.wall_s + r.hot.wall_s,
                               .verify_s = r.verify_s,
                               .graphs_s = r.graphs_s};
  if (!r.before.ok) return failure{failure_kind::wrong_result, named + r.before.reason, spent};
  if (!r.after.ok) return failure{failure_kind::wrong_result, after + r.after.reason, spent};
  measurement m;
  m.times = spent;
  m.check = r.before;
  m.bytes_read = w.bytes_read();
  m.launches = launches;
  m.cold = std::move(r.cold);
  m.hot = std::move(r.hot);
  price(m, m.bytes_read, device, options);
  return m;
}

void price(measurement &m, std::uint64_t bytes, const device_info &device,
           const evaluate_options &options) {
  m.bytes_per_s = bandwidth_bytes_per_s(bytes, m.cold.stats.median);
  m.percent_of_peak = percent_of(m.bytes_per_s, device.peak_bytes_per_s());
  m.percent_of_ceiling = percent_of(m.bytes_per_s, options.ceiling_bytes_per_s);
}

} // namespace reducetune
