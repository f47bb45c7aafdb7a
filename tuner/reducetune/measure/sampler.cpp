#include "reducetune/measure/sampler.hpp"

#include "reducetune/cuda/event.hpp"

#include <chrono>

namespace reducetune {

timing sample(const std::function<void(cudaStream_t)> &enqueue, cudaStream_t s,
              l2_flush *flush, const stopping_rule &rule) {
  timing t;
  event start, stop;
  const auto begin = std::chrono::steady_clock::now();
  for (;;) {
    if (flush) flush->enqueue(s);
    start.record(s);
    enqueue(s);
    stop.record(s);
    t.samples_s.push_back(elapsed_seconds(start, stop));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    t.stopped = should_stop(rule, t.samples_s, elapsed);
    if (t.stopped != stop_reason::keep_going) break;
  }
  t.stats = summarize(t.samples_s);
  return t;
}

} // namespace reducetune
