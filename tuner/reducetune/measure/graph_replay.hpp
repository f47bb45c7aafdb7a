// Each input copy's launch sequence captured once into a CUDA graph; a sample is then one
// graph launch. Why: with one command per kernel, the GPU's front end fetches the later
// launches after the gate opens, and on an H200 that added a ~1 us offset that came and
// went over tens of seconds: consecutive runs of 8-13 us sequences differed by up to 12 %.
// Replaying graphs, the same runs agreed within 3.6 % at 2^20 and 1.2 % from 2^24
// (docs/results/h200_2026-11-22_bench-repeat.md). nvbench and METHOD-style advice agree:
// time graph replays for short multi-launch work.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace reducetune {

class graph_replay {
public:
  using runner = std::function<void(cudaStream_t, std::size_t)>; // enqueues copy i

  // Captures run(s, i) for i in [0, copies) on s (a non-default stream). Throws launch_error
  // when a sequence cannot be captured or instantiated; nothing is left capturing.
  graph_replay(const runner &run, std::size_t copies, cudaStream_t s);
  ~graph_replay();
  graph_replay(const graph_replay &) = delete;
  graph_replay &operator=(const graph_replay &) = delete;

  void launch(cudaStream_t s, std::size_t i);

private:
  std::vector<cudaGraphExec_t> m_execs;
};

} // namespace reducetune
