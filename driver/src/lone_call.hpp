// One call as an application makes it, timed in C++ (the runtime benchmark's and the axis
// benchmark's C++ contenders: the Reducer, CUB, the streaming kernel, cudaMemcpyAsync): two
// events on the call's stream around it, the stream synchronised after, so that the next call
// starts on an idle GPU, as an application's lone call does. No Python runs between the events:
// what a C++ application pays for the call (its host work up to the launch, the launch) is
// timed, and nothing of the interpreter that calls it here.
#pragma once

#include "reducetune/cuda/event.hpp"

#include <cuda_runtime_api.h>

#include <functional>
#include <utility>

namespace rtpy {

namespace rt = reducetune;

using call_on = std::function<void(cudaStream_t)>;

struct lone_call_time {
  double seconds = 0;      // between the two events (the GPU's clock)
  double host_seconds = 0; // the call's own host time, until it returned (the host's clock)
  // What the bindings return: (seconds between the events, the call's host seconds).
  [[nodiscard]] std::pair<double, double> pair() const { return {seconds, host_seconds}; }
};

lone_call_time time_lone_call(const call_on &call, cudaStream_t s, rt::event &start,
                              rt::event &stop);
// The same with this thread's two events, made on its first call.
lone_call_time time_lone_call(const call_on &call, cudaStream_t s);

} // namespace rtpy
