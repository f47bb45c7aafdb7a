// One variant's launch protocol (docs/architecture.md, "Launch protocols") over a device
// input: owns the scratch it needs and enqueues the whole sequence that one sample times.
//
// Every launch passes the five ABI arguments (in, out, n, partials, ticket) as a void* array;
// a kernel reads only the prefix it declares. The host protocol ends with a copy of the
// partials to the host and their combine there (measure/host_finish.hpp). The ticket counter
// is zeroed once at allocation: a ticket kernel's last block resets it, so a kernel that does
// not leaves the next sample wrong, which the verifier then reports.
#pragma once

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/cuda/reduction_steps.hpp"
#include "reducetune/measure/host_finish.hpp"
#include "reducetune/space/launch_plan.hpp"
#include "reducetune/space/reduction_plan.hpp"
#include "reducetune/verify/types.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace reducetune {

class launch_sequence {
public:
  // Throws invalid_configuration when the plan cannot run (a missing kernel, a grid that
  // does not shrink in multipass or exceeds the device limit, no block size).
  launch_sequence(const loaded_module &module, const launch_plan &plan, dtype type,
                  const void *in, std::uint64_t n);
  // The planner's steps for n, handed by the caller (the tuning runner, measure/evaluate.cpp):
  // the sequence launches those grids and reads the plan's kernels, protocol and flags, not its
  // grid rule, which may be empty (past the planner, a launch holds grids, not the point).
  launch_sequence(const loaded_module &module, const launch_plan &plan,
                  const reduction_plan &steps, dtype type, const void *in, std::uint64_t n);

  void enqueue(cudaStream_t s);

  // Where the result lies once the stream has passed enqueue()'s work: one element of the
  // dtype, on the device, or for the host protocol in page-locked host memory. Read it with
  // cudaMemcpyDefault, which serves both.
  [[nodiscard]] const void *result() const noexcept { return m_result; }
  // Fills the result's bytes with `byte` (sample_copies' poison): on s where it is on the
  // device, here where it is the host protocol's (s is then idle: the checked runs wait).
  void poison(cudaStream_t s, unsigned char byte);
  [[nodiscard]] unsigned launches() const noexcept { return m_launches; }

private:
  void bind_steps(const loaded_module &module, const launch_plan &plan,
                  const reduction_plan &steps);

  std::size_t m_elem;
  const void *m_source; // the caller's input
  const void *m_in;     // what the first pass reads: the source, or its scratch copy
  std::uint64_t m_n;
  bool m_in_place;
  device_buffer m_scratch_input; // in-place kernels work on a copy, restored before each run
  device_buffer m_out, m_partials, m_ping, m_pong;
  device_buffer m_ticket;
  std::unique_ptr<host_finish> m_host; // the host protocol's copy and combine
  std::vector<reduction_step> m_steps;
  const void *m_result = nullptr;
  unsigned m_launches = 0;
};

} // namespace reducetune
