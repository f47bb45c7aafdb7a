// The wire protocol between a caller and `reducetune-worker`: one JSON object per line in each
// direction (requests on the worker's stdin, replies on its stdout). The worker is a separate
// executable (fork + exec) so that a variant that poisons its CUDA context takes only the
// worker with it; remote_evaluate.hpp is the client.
//
// Request (fields marked * are required; the others take the defaults of the C++ structs):
//   {"id": 7,                                   echoed in the reply
//    "templates": "/path",                      a folder laid over the embedded library
//                                               ("" or absent: the embedded library)
//    "family"*: "tunable",
//    "variant"*: "tunable.float32.sum.bs_256…", the variant label (carries dtype and op)
//    "launch"*: "ept_16.cap_0",                 the launch-config label
//    "workload"*: {"dtype"*, "op"*, "n"*, "pattern", "seed", "offset"},
//    "options": {"cold_rule": {min_samples, max_samples, max_noise, time_cap_s},
//                "hot_rule": {…}, "hot": true, "ceiling_bytes_per_s": 0,
//                "tolerance": {"depth": 0}},
//    "program": {"cubin_base64", "lowered": {name expression: mangled}, "key"}}
//                                               absent: the worker compiles the variant itself
// Reply:
//   {"id": 7, "variant": …, "launch": …,
//    "result": "measurement", "measurement": {cold, hot, bytes_read, launches, bytes_per_s,
//                                             percent_of_peak, percent_of_ceiling, check}
//    or "result": "failure", "failure": {"kind": "launch_error", "reason": "…"},
//    "exits": true,                             the worker exits after this reply (its context
//                                               may be poisoned: every launch_error)
//    "device": {"name", "uuid", "cc", "sm_count", …}, "compile_seconds": 0.0, "compiled": true}
//
// Failure kinds on the wire are the names of failure_kind (measurement.hpp) plus two that exist
// only here: "compile_error" (the worker could not compile the variant; the client reports it
// as invalid_configuration, the reason starting "compile error: ") and "bad_request"
// (malformed request: a bug of the caller, which the client raises as protocol_error).
//
// Non-finite doubles (a verdict's expected/got are strings already; tolerance and error may be
// inf) travel as the strings "nan", "inf", "-inf". Doubles are written with enough digits to
// round-trip; a verdict's long double fields travel as double.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/evaluate.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reducetune {

// A request or reply line that is not what the protocol says; the message names the field.
class protocol_error : public error {
public:
  using error::error;
};

struct worker_request {
  std::uint64_t id = 0;
  std::string templates; // folder laid over the embedded library; "" = embedded
  std::string family;
  std::string variant_label;
  std::string launch_label;
  workload load;
  evaluate_options options;
  std::optional<compiled_program> program; // none: the worker compiles (and caches) it
};

// The wire-only failure kinds (see above).
enum class reply_failure { none, evaluation, compile_error, bad_request };

struct worker_reply {
  std::uint64_t id = 0;
  std::string variant_label;
  std::string launch_label;
  evaluation result = failure{failure_kind::launch_error, "no reply"};
  // compile_error / bad_request travel as their own kinds; result then holds
  // invalid_configuration with the reason.
  reply_failure wire_kind = reply_failure::none;
  bool exits = false; // the worker leaves after this reply
  std::optional<device_info> device;
  double compile_seconds = 0; // 0 when the cubin came with the request or from the cache
  bool compiled = false;      // the worker compiled (or found in its cache) the program
};

// One line of JSON (no trailing newline); parse_* throw protocol_error with the field's name.
[[nodiscard]] std::string to_json_line(const worker_request &r);
[[nodiscard]] std::string to_json_line(const worker_reply &r);
[[nodiscard]] worker_request parse_request(std::string_view line);
[[nodiscard]] worker_reply parse_reply(std::string_view line);

// A bad_request reply for a line that could not be parsed (id 0 when it could not be read).
[[nodiscard]] worker_reply bad_request_reply(std::uint64_t id, const std::string &reason);

[[nodiscard]] const char *to_string(reply_failure k) noexcept;
// The inverses of to_string for the enums the protocol carries; throw protocol_error.
[[nodiscard]] failure_kind failure_kind_from_string(const std::string &name);
[[nodiscard]] stop_reason stop_reason_from_string(const std::string &name);

// RFC 4648 base64 (with padding) for cubins; decode throws protocol_error on bad input.
[[nodiscard]] std::string base64_encode(std::string_view bytes);
[[nodiscard]] std::string base64_decode(std::string_view text);

} // namespace reducetune
