// The one entry point the driver uses: run a compiled variant under a launch plan on a
// workload, verify it, time it, and return a measurement or a typed failure.
//
// In-process: a fault that destroys the CUDA context is reported here as a launch_error, but
// the context stays unusable; the Python driver runs evaluate() in a worker process
// (driver/reducetune/evaluate/worker.py) so that the study goes on with a fresh process.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/measurement.hpp"
#include "reducetune/measure/prepared_workload.hpp"
#include "reducetune/measure/workload.hpp"
#include "reducetune/space/launch_plan.hpp"

namespace reducetune {

struct evaluate_options {
  stopping_rule cold_rule{};
  stopping_rule hot_rule{};
  bool hot = true;                // also take back-to-back samples
  bool graph = true;              // replay each sequence as a CUDA graph (graph_replay.hpp)
  double ceiling_bytes_per_s = 0; // measured streaming ceiling (0: not known)
  tolerance_options tolerance{};
};

// Never throws for a failure of the variant; programming errors (bad arguments) still throw.
// The cache keeps the workload's input and reference, and the L2 flush buffer, for the next
// call: a process that evaluates many points (the workers, the bench) passes the same one.
[[nodiscard]] evaluation evaluate(const compiled_program &program, const launch_plan &plan,
                                  const workload &w, const device_info &device,
                                  const evaluate_options &options, evaluation_cache &cache);

// One-off: prepares the workload for this call alone.
[[nodiscard]] evaluation evaluate(const compiled_program &program, const launch_plan &plan,
                                  const workload &w, const device_info &device,
                                  const evaluate_options &options = {});

} // namespace reducetune
