// The host protocol's finish (docs/architecture.md, "Launch protocols"): the seeds' "host
// finish". The pass kernel writes one partial per block; the partials are copied into
// page-locked host memory and combined there by a host function enqueued on the same stream.
// Captured as a graph, one sample is then a kernel node, a memcpy node and a host node: the
// sample's stop event waits for the CPU's combine, so the copy and the combine are timed.
#pragma once

#include "reducetune/cuda/pinned_buffer.hpp"
#include "reducetune/verify/types.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <memory>

namespace reducetune {

// Combines count >= 1 elements of `type` at `partials`, in index order, into one element at
// `result`, as the device's operators do (kernel_templates/common/rt_ops.cuh): integer sums
// and products wrap modulo 2^bits (computed in the unsigned type: no signed overflow on the
// host), floats are combined in their own type, min is `b < a ? b : a` and max `a < b ? b : a`
// (so NaN and signed zeros behave as on the GPU).
void combine_on_host(dtype type, reduce_op op, const void *partials, std::uint64_t count,
                     void *result);

class host_finish {
public:
  // Page-locked room for `count` partials and the result.
  host_finish(dtype type, reduce_op op, std::uint64_t count);

  // Enqueues on s: the copy of the partials from device memory, then the combine.
  void enqueue(cudaStream_t s, const void *device_partials);

  // The combined element, in page-locked host memory; valid once s has passed the combine.
  [[nodiscard]] const void *result() const noexcept { return m_result.data(); }
  // Fills the result's bytes with `byte` (the verification's poison: launch_sequence::poison).
  void poison(unsigned char byte) noexcept { std::memset(m_result.data(), byte, m_result.size()); }

private:
  struct state {
    dtype type;
    reduce_op op;
    std::uint64_t count;
    const void *partials;
    void *result;
  };
  static void CUDART_CB run(void *arg) noexcept;

  pinned_buffer m_partials, m_result;
  std::unique_ptr<state> m_state; // the host function's argument: it stays put
};

} // namespace reducetune
