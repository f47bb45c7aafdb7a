#include "lone_call.hpp"

#include <chrono>

namespace rtpy {

lone_call_time time_lone_call(const call_on &call, cudaStream_t s, rt::event &start,
                              rt::event &stop) {
  start.record(s);
  const auto t0 = std::chrono::steady_clock::now();
  call(s);
  const auto t1 = std::chrono::steady_clock::now();
  stop.record(s);
  stop.synchronize();
  return {rt::elapsed_seconds(start, stop), std::chrono::duration<double>(t1 - t0).count()};
}

lone_call_time time_lone_call(const call_on &call, cudaStream_t s) {
  thread_local rt::event start, stop; // made once: an event's creation is not the call's cost
  return time_lone_call(call, s, start, stop);
}

} // namespace rtpy
