#include "reducetune/measure/axis_runner.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/sample_copies.hpp"
#include "reducetune/verify/axis_reference.hpp"

#include <memory>
#include <vector>

namespace reducetune {
namespace {

// What one input copy's launches write: its outputs and, for a point that splits r, its
// partials (each copy its own, as launch_sequence gives each its scratch), whose counters
// (tile_ticket) are zeroed once here, before any sample or capture: each launch leaves them zero.
struct axis_copy {
  const void *in;
  device_buffer out, partials;

  axis_copy(const void *input, const axis_plan &plan, std::uint64_t out_bytes)
      : in(input), out(out_bytes), partials(plan.partials_bytes()) {
    zero_counters(plan, partials.data());
  }
};

// A verdict of every output, in the shape the timing recipe and the measurement keep: the
// first failures as its reason.
verdict verdict_of(const axis_verdict &v) {
  verdict out;
  out.ok = v.ok();
  out.reason = v.ok() ? std::to_string(v.outputs) + " outputs checked" : v.summary();
  return out;
}

// The axis kernels write the element type (axis_launch.hpp: out holds outer * inner
// elements), never a float32 result for a half type.
tolerance_options axis_tolerance(tolerance_options t) {
  t.float32_output = false;
  return t;
}

evaluation measure_axis(const compiled_program &program, const axis_plan &plan,
                        const problem &pr, prepared_workload &in, l2_flush &flush,
                        const device_info &device, const evaluate_options &options,
                        prepare_clock &clock) {
  const loaded_module module(program);
  // The reference of every output, from the host data the copies were uploaded from. Computed
  // per evaluation: evaluation_cache keeps a whole-array reference only.
  const axis_reference reference(pr, in.host());
  const std::uint64_t out_bytes = pr.outputs() * size_of(pr.type);
  std::vector<std::unique_ptr<axis_copy>> copies;
  for (std::size_t i = 0; i < in.copies(); ++i)
    copies.push_back(std::make_unique<axis_copy>(in.input(i), plan, out_bytes));

  // resolved once, as the runtime does (runtime/reducer_axis.cpp): a sample times launches only
  const axis_kernels kernels = resolve_axis(module, plan);
  const auto run = [&](cudaStream_t st, std::size_t i) {
    axis_copy &c = *copies[i];
    launch_axis(kernels, plan, c.in, c.out.data(), c.partials.data(), st);
  };
  const tolerance_options tolerance = axis_tolerance(options.tolerance);
  std::vector<unsigned char> got(out_bytes);
  const copy_check check = [&](std::size_t i) {
    copies[i]->out.download(got.data(), got.size());
    return verdict_of(reference.check(got.data(), 8, tolerance));
  };
  stream s;
  clock.ready();
  const copy_poison poison = [&](cudaStream_t st, std::size_t i, unsigned char byte) {
    copies[i]->out.fill(byte, st);
  };
  sampled_copies r = sample_copies(run, check, copies.size(), s, flush, options, poison);
  evaluation e = measurement_of(std::move(r), in.spec(), plan.launches(), device, options);
  if (auto *m = std::get_if<measurement>(&e)) price(*m, pr.bytes_read_and_written(), device, options);
  clock.done();
  return e;
}

} // namespace

std::string axis_refusal(const search_space &space, const problem &pr) {
  if (!pr.is_whole_array()) return "";
  return "family '" + space.decl().name + "' reduces along an axis, not the whole array " +
         to_label(pr) + ": give a shape (outer, r, inner) with outer x inner > 1, or measure " +
         "the whole array with a whole-array family";
}

evaluation evaluate_axis(const compiled_program &program, const axis_plan &plan,
                         const problem &pr, const input_data &data, const device_info &device,
                         const evaluate_options &options, evaluation_cache &cache) {
  return measure_on(workload_of(pr, data), cache, [&](prepared_workload &in, prepare_clock &clock) {
    return measure_axis(program, plan, pr, in, cache.flush_for(device), device, options, clock);
  });
}

} // namespace reducetune
