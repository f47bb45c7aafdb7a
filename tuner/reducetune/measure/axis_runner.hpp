// The runner of the axis kernel ABI (evaluate.cpp's table, "axis"): a compiled point of the
// axis family measured on one shape (outer, r, inner) with the whole-array runner's protocol
// (measure/sample_copies: input copies rotated, L2 flushed before each cold sample, CUDA
// events, graph replay, the stopping rules; every copy checked before and after sampling),
// launched by measure/axis_launch and every output checked by verify/axis_reference.
//
// Bandwidth counts the bytes read plus the bytes written (outer x inner results), so that a
// row reduction of short rows, which writes a result per few elements read, compares with a
// whole-array one and with the peers' numbers in issue 26.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/measure/axis_launch.hpp"

namespace reducetune {

// Why a problem is not the axis runner's, one line ("" when it is): the whole array (1, n, 1)
// is the whole-array families' problem, measured by their runner.
[[nodiscard]] std::string axis_refusal(const search_space &space, const problem &pr);


// Measures `program` under `plan` (plan_axis at pr's shape) on pr's input from `data`. Never
// throws for a failure of the point (a launch error, a wrong output: a failure).
[[nodiscard]] evaluation evaluate_axis(const compiled_program &program, const axis_plan &plan,
                                       const problem &pr, const input_data &data,
                                       const device_info &device, const evaluate_options &options,
                                       evaluation_cache &cache);

} // namespace reducetune
