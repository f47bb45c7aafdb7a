// Holds a stream until the host has enqueued all the work to be timed (nvbench's blocking
// kernel). Without it, a sequence of short launches is timed at the rate the CPU enqueues
// them: the GPU idles between the start event and each launch, and that idle time moves with
// the host's load from one run to the next (seen as +0.8 µs on 11 µs multi-pass seeds).
//
//   gate.block(s); start.record(s); enqueue(s); stop.record(s); gate.release();
//
// The spin kernel gives up after about a second, so a host that never releases cannot hang
// the GPU (a host takes microseconds to enqueue a sample).
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

private:
  volatile int *m_flag = nullptr; // 0: hold, 1: released
  int *m_device_flag = nullptr;    // the same int, as the spin kernel sees it
};

} // namespace reducetune
