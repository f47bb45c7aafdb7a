// The one entry point the driver uses: a point of a search space on a problem, checked and
// planned by the space, compiled, launched, verified and timed; a measurement or a typed failure.
//
// In-process: a fault that destroys the CUDA context is reported here as a launch_error, but
// the context stays unusable; the Python driver runs evaluate() in a worker process
// (driver/reducetune/evaluate/gpu.py) so that the study goes on with a fresh process.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/measurement.hpp"
#include "reducetune/measure/prepared_workload.hpp"
#include "reducetune/measure/workload.hpp"
#include "reducetune/space/launch_plan.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <functional>
#include <string>

namespace reducetune {

struct evaluate_options {
  stopping_rule cold_rule{}; // its outpaced_above_s races the point (hot samples then skipped)
  stopping_rule hot_rule{};
  bool hot = true;                // also take back-to-back samples
  bool graph = true;              // replay each sequence as a CUDA graph (graph_replay.hpp)
  double ceiling_bytes_per_s = 0; // measured streaming ceiling (0: not known)
  tolerance_options tolerance{};
};

// What the input holds beside its problem: the data pattern and seed its elements come from
// (part of what the store keys a measurement by), and a start that is not 16-byte aligned.
struct input_data {
  data_pattern pattern = data_pattern::uniform;
  std::uint64_t seed = default_data_seed;
  unsigned offset_elements = 0;
};

// The workload the runner prepares for a whole-array problem (1, n, 1).
[[nodiscard]] workload workload_of(const problem &pr, const input_data &data);

// Throws invalid_configuration, one line, for an invalid problem or a point of another element
// type or operator than the problem's: the caller's mistake, refused before any device is used.
void require_point_for(const family &f, const point &p, const problem &pr);

// Point p of `space` on problem `pr`. The space decides everything about the point: its
// validity (an invalid point is a failure, never compiled), its launch (plan_launch and the
// one planner, space/reduction_plan). The family's kernel ABI picks the runner: "whole_array"
// runs measure/launch_sequence, "axis" measure/axis_runner (on the problem's shape); another
// ABI is a failure naming it. A compile error is a failure (compile_error). Throws as require_point_for does, and for a space of another
// element type or operator.
// The cache keeps the workload's input and reference, and the L2 flush buffer, for the next
// call: a process that evaluates many points (the workers, the bench) passes the same one.
[[nodiscard]] evaluation evaluate(const search_space &space, const problem &pr, const point &p,
                                  const input_data &data, compiler &jit, const device_info &device,
                                  const evaluate_options &options, evaluation_cache &cache);

// The whole-array runner alone: a compiled program under a plan the caller made (GPU tests of
// one protocol). Never throws for a failure of the variant; programming errors still throw.
[[nodiscard]] evaluation evaluate(const compiled_program &program, const launch_plan &plan,
                                  const workload &w, const device_info &device,
                                  const evaluate_options &options, evaluation_cache &cache);

// One-off: prepares the workload for this call alone.
[[nodiscard]] evaluation evaluate(const compiled_program &program, const launch_plan &plan,
                                  const workload &w, const device_info &device,
                                  const evaluate_options &options = {});

struct sampled_copies;

// measure(in, clock) on the cache's prepared workload w: a wrong result uploads the input again
// (the next point must not inherit what a wrong one wrote), and an error the point throws
// (invalid_configuration, device_error, launch_error) is its failure. The evaluation's
// prepare_s and its parts are stamped here: workload_s, and through `clock` (which measure
// marks ready() once its module, scratch and stream exist and done() once it measured) setup_s
// and teardown_s, the latter once measure returned and its resources were destroyed. What
// every runner shares.
[[nodiscard]] evaluation
measure_on(const workload &w, evaluation_cache &cache,
           const std::function<evaluation(prepared_workload &, prepare_clock &)> &measure);

// Sets m's bandwidth from `bytes` moved per sample over its cold median, and its % of the
// device's peak and of the measured ceiling.
void price(measurement &m, std::uint64_t bytes, const device_info &device,
           const evaluate_options &options);

// A measurement from sampled copies (bandwidth, % of peak and of ceiling), or the wrong_result
// failure of a copy checked before or after sampling, named by `who` ("" for a variant, "CUB"):
// what a variant and the CUB baseline share.
[[nodiscard]] evaluation measurement_of(sampled_copies &&r, const workload &w, unsigned launches,
                                        const device_info &device, const evaluate_options &options,
                                        const std::string &who = "");

} // namespace reducetune
