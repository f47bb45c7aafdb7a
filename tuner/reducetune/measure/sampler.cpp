#include "reducetune/measure/sampler.hpp"

#include "reducetune/cuda/event.hpp"
#include "reducetune/cuda/stream_gate.hpp"

#include <chrono>

namespace reducetune {
namespace {

// Releases the gate however the enqueue ends (a launch that throws must not leave the
// stream spinning until the gate's timeout).
struct release_on_exit {
  stream_gate &gate;
  ~release_on_exit() { gate.release(); }
};

} // namespace

timing sample(const std::function<void(cudaStream_t)> &enqueue, cudaStream_t s,
              l2_flush *flush, const stopping_rule &rule) {
  timing t;
  event start, stop;
  stream_gate gate;
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
