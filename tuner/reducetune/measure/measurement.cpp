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

} // namespace reducetune
