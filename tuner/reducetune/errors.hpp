// The one exception hierarchy of reducetune and the checking macros, one per API.
//
// Every CUDA runtime, driver, NVRTC, nvJitLink and SQLite call goes through its own macro so
// that a failure names the file, the line and the call's text (nvbench's cuda_call.cuh is the
// model). Destructors use the _NOEXCEPT forms, which report to stderr and never throw. The
// driver's macros (RT_DRIVER_CALL) live with the driver API in cuda/driver_api.hpp, and
// SQLite's (RT_SQLITE_CALL) with the store: each names its errors through its own library.
#pragma once

#include <stdexcept>
#include <string>

namespace reducetune {

// Root of every error reducetune raises on purpose; the Python layer maps each subclass to a
// Python exception of the same name.
class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A parameter value, family declaration, workload or point that is not valid (never compiled).
class invalid_configuration : public error {
public:
  using error::error;
};

// NVRTC or nvJitLink rejected a program; the log, options and name expressions are kept.
class compile_error : public error {
public:
  compile_error(const std::string &what, std::string log)
      : error(what + (log.empty() ? std::string{} : "\n--- compile log ---\n" + log)),
        m_log(std::move(log)) {}
  [[nodiscard]] const std::string &log() const noexcept { return m_log; }

private:
  std::string m_log;
};

// A kernel launch or a CUDA runtime / driver call failed while running a variant.
class launch_error : public error {
public:
  using error::error;
};

// A kernel ran but its result is wrong (outside the tolerance, or not exact for integers).
class verification_error : public error {
public:
  using error::error;
};

// The SQLite store: corrupt, foreign or newer database, constraint violation, I/O.
class store_error : public error {
public:
  using error::error;
};

// No GPU, driver too old, or a device attribute that cannot be read.
class device_error : public error {
public:
  using error::error;
};

namespace detail {
// " in `call` at file:line", the tail of every checking macro's message.
[[nodiscard]] std::string call_site(const char *call, const char *file, int line);
[[noreturn]] void throw_cuda_runtime(int code, const char *call, const char *file, int line);
[[noreturn]] void throw_nvrtc(int code, const char *call, const char *file, int line);
void report_noexcept(const char *api, int code, const char *call, const char *file,
                     int line) noexcept;
// report_noexcept for one API, in the shape RT_DETAIL_CHECK calls.
struct noexcept_reporter {
  const char *api;
  void operator()(int code, const char *call, const char *file, int line) const noexcept {
    report_noexcept(api, code, call, file, line);
  }
};
} // namespace detail

} // namespace reducetune

// The body of every checking macro (one per API, here and in cuda/driver_api.hpp): evaluates
// the call once and hands a non-zero status, the call's text, file and line to on_error.
#define RT_DETAIL_CHECK(status, text, on_error)                                                \
  do {                                                                                         \
    const int rt_status_ = static_cast<int>(status);                                           \
    if (rt_status_ != 0)                                                                       \
      on_error(rt_status_, text, __FILE__, __LINE__);                                          \
  } while (false)

// CUDA runtime API (cudaError_t). Clears the sticky-free last error so later calls start clean.
#define RT_CUDA_CALL(call) RT_DETAIL_CHECK(call, #call, ::reducetune::detail::throw_cuda_runtime)

// NVRTC (nvrtcResult). Compile failures are not raised here: the compiler reads the log first.
#define RT_NVRTC_CALL(call) RT_DETAIL_CHECK(call, #call, ::reducetune::detail::throw_nvrtc)

// Forms for destructors and other noexcept paths: report, never throw.
#define RT_CUDA_CALL_NOEXCEPT(call)                                                            \
  RT_DETAIL_CHECK(call, #call, ::reducetune::detail::noexcept_reporter{"CUDA"})
