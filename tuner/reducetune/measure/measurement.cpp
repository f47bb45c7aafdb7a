#include "reducetune/measure/measurement.hpp"

namespace reducetune {

const char *to_string(failure_kind k) noexcept {
  switch (k) {
  case failure_kind::invalid_configuration: return "invalid_configuration";
  case failure_kind::launch_error: return "launch_error";
  case failure_kind::wrong_result: return "wrong_result";
  case failure_kind::worker_crashed: return "worker_crashed";
  case failure_kind::timed_out: return "timed_out";
  case failure_kind::device_error: return "device_error";
  case failure_kind::compile_error: return "compile_error";
  }
  return "?";
}

double seconds_since(std::chrono::steady_clock::time_point t0) noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

evaluation_times &times_of(evaluation &e) noexcept {
  if (auto *m = std::get_if<measurement>(&e)) return m->times;
  return std::get<failure>(e).times;
}

const evaluation_times &times_of(const evaluation &e) noexcept {
  if (const auto *m = std::get_if<measurement>(&e)) return m->times;
  return std::get<failure>(e).times;
}

} // namespace reducetune
