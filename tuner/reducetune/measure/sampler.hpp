// The timer shared by variants and baselines: CUDA events around each launch sequence, the
// L2 flushed before each cold sample (outside the events), samples taken until the stopping
// rule says so. Every sample is kept. The stream is held by a gate (cuda/stream_gate.hpp)
// until the whole sequence is enqueued, so a sample is GPU time, not the host's launch rate.
#pragma once

#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/measure/measurement.hpp"

#include <cuda_runtime_api.h>

#include <functional>

namespace reducetune {

// enqueue: puts one whole launch sequence on the stream (no synchronisation inside).
// flush: non-null for cold samples.
[[nodiscard]] timing sample(const std::function<void(cudaStream_t)> &enqueue, cudaStream_t s,
                            l2_flush *flush, const stopping_rule &rule);

} // namespace reducetune
