// The timing recipe shared by variants (evaluate.cpp), CUB (cub_evaluate.cpp) and
// reducetune-bench (docs/architecture.md, "Timing one sample"): every input copy run once and
// checked; each copy's sequence captured as a CUDA graph when asked and possible (direct
// launches otherwise); cold samples (L2 flushed before each) and, when asked, hot samples,
// rotating over the copies; then every copy checked again, since a racy sequence may be right
// once and wrong later.
#pragma once

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/measure/graph_replay.hpp"
#include "reducetune/measure/prepared_workload.hpp"

#include <functional>

namespace reducetune {

struct sampled_copies {
  verdict before; // the first wrong verdict before sampling, or the last ok one
  verdict after;  // the same after sampling; only checked when before.ok
  timing cold, hot;
  double verify_s = 0; // the checked runs before and after sampling (evaluation_times)
  double graphs_s = 0; // the sequences' CUDA graphs captured and instantiated (evaluation_times)
};

// poison(s, i, byte) fills copy i's result with `byte` on s before each checked run: every
// checked run of the before pass finds POISON_BEFORE there, of the after pass POISON_AFTER, so
// a sequence that writes no result fails one of them (no result is both an all-0xFF and an
// all-0x7F value). Without it, a point's output buffer held what the point before it left,
// often at the same address and, for the same workload, the right result. Empty: no poison
// (CUB's call, which always writes).
using copy_poison = std::function<void(cudaStream_t, std::size_t, unsigned char)>;
inline constexpr unsigned char POISON_BEFORE = 0xFF; // NaN in every float type; -1
inline constexpr unsigned char POISON_AFTER = 0x7F;  // a large finite float; a large int

// run(s, i) enqueues the sequence over copy i of in; result(i) is where it leaves its result.
// Uses options.cold_rule, hot_rule, hot, graph and tolerance.
[[nodiscard]] sampled_copies sample_copies(const graph_replay::runner &run,
                                           const std::function<const void *(std::size_t)> &result,
                                           prepared_workload &in, stream &s, l2_flush &flush,
                                           const evaluate_options &options,
                                           const copy_poison &poison = {});

// check(i) verifies what run(s, i) left (copy i of `copies`): the same recipe for a result that
// is not one element of in (measure/axis_runner: every output of a shape).
using copy_check = std::function<verdict(std::size_t)>;
[[nodiscard]] sampled_copies sample_copies(const graph_replay::runner &run, const copy_check &check,
                                           std::size_t copies, stream &s, l2_flush &flush,
                                           const evaluate_options &options,
                                           const copy_poison &poison = {});

} // namespace reducetune
