#include "reducetune/measure/sampler.hpp"

#include "reducetune/cuda/event.hpp"
#include "reducetune/cuda/stream_gate.hpp"
#include "reducetune/errors.hpp"

#include <chrono>
#include <map>

namespace reducetune {
namespace {

// Releases the gate however the enqueue ends (a launch that throws must not leave the
// stream spinning until the gate's timeout).
struct release_on_exit {
  stream_gate &gate;
  ~release_on_exit() { gate.release(); }
};

// This thread's gate for its current device, made on its first sample there and kept: a
// gate's flag is pinned, mapped host memory, and its cudaHostAlloc and cudaFreeHost took 1.5 ms
// of every point's 7.3 when each sample() made its own (issue 25: the 768-point sweep on an
// H200, "prepare" other_s 1.48 ms a point). Never freed: cudaFreeHost from a thread_local's
// destructor could run after CUDA's own teardown at exit; a few bytes per thread and device go
// back with the process. Per device, since the flag's device pointer is its device's. Valid
// while the device's primary context lives: nothing here resets it (cudaDeviceReset would free
// the flag), and a sticky CUDA error ends the GPU worker's process (evaluate/gpu.py).
stream_gate &gate_of_this_thread() {
  thread_local std::map<int, stream_gate *> gates;
  int device = 0;
  RT_CUDA_CALL(cudaGetDevice(&device));
  stream_gate *&gate = gates[device];
  if (gate == nullptr) gate = new stream_gate(); // NOLINT: kept for the process's life
  return *gate;
}

} // namespace

timing sample(const std::function<void(cudaStream_t)> &enqueue, cudaStream_t s,
              l2_flush *flush, const stopping_rule &rule) {
  timing t;
  event start, stop;
  stream_gate &gate = gate_of_this_thread();
  const auto begin = std::chrono::steady_clock::now();
  for (;;) {
    if (flush) flush->enqueue(s);
    gate.block(s); // the whole sequence is queued before the GPU reaches the start event
    {
      release_on_exit release{gate};
      start.record(s);
      enqueue(s);
      stop.record(s);
    }
    t.samples_s.push_back(elapsed_seconds(start, stop));
    const double elapsed = seconds_since(begin);
    t.stopped = should_stop(rule, t.samples_s, elapsed);
    t.wall_s = elapsed;
    if (t.stopped != stop_reason::keep_going) break;
  }
  t.stats = summarize(t.samples_s);
  return t;
}

} // namespace reducetune
