// Holds a stream until the host has enqueued all the work to be timed (nvbench's blocking
// kernel). Without it, a sequence of short launches is timed at the rate the CPU enqueues
// them: the GPU idles between the start event and each launch, and that idle time moves with
// the host's load from one run to the next (seen as +0.8 µs on 11 µs multi-pass seeds).
//
//   gate.block(s); start.record(s); enqueue(s); stop.record(s); gate.release();
//
// The spin kernel gives up after a timeout (a host that never releases cannot hang the GPU);
// timed_out() then says that the sample included host time.
#pragma once

#include <cuda_runtime_api.h>

namespace reducetune {

class stream_gate {
public:
  stream_gate();  // a flag in mapped, pinned host memory
  ~stream_gate();
  stream_gate(const stream_gate &) = delete;
  stream_gate &operator=(const stream_gate &) = delete;

  void block(cudaStream_t s); // clears the flag and enqueues the spin kernel
  void release() noexcept;    // sets the flag: the spin kernel returns
  // Whether a spin kernel gave up waiting since the last block(); call after synchronising.
  [[nodiscard]] bool timed_out() const noexcept;

private:
  volatile int *m_flags = nullptr; // [0]: release, [1]: timed out
};

} // namespace reducetune
