#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <tuple>
#include <string>

namespace reducetune::detail {

std::string call_site(const char *call, const char *file, int line) {
  return std::string{" in `"} + call + "` at " + file + ":" + std::to_string(line);
}

void throw_cuda_runtime(int code, const char *call, const char *file, int line) {
  const auto status = static_cast<cudaError_t>(code);
  // Reading the last error clears a non-sticky error so that the next call starts clean.
  (void)cudaGetLastError();
  const std::string msg = std::string{"CUDA error "} + cudaGetErrorName(status) + " (" +
                          std::to_string(code) + "): " + cudaGetErrorString(status) +
                          call_site(call, file, line);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
    throw device_error(msg);
  throw launch_error(msg);
}

void throw_nvrtc(int code, const char *call, const char *file, int line) {
  throw compile_error(std::string{"NVRTC error "} +
                          nvrtcGetErrorString(static_cast<nvrtcResult>(code)) +
                          call_site(call, file, line),
                      {});
}

void report_noexcept(const char *api, int code, const char *call, const char *file,
                     int line) noexcept {
  // Once per call site and error: after a kernel faults, the context's sticky error makes
  // every later free fail alike (hundreds of lines per faulting variant in a sweep).
  static std::mutex mutex;
  static std::set<std::tuple<std::string, int, int>> said;
  try {
    std::lock_guard lock(mutex);
    if (!said.emplace(file, line, code).second)
      return;
  } catch (...) { // out of memory for the set: say it every time rather than never
  }
  std::fprintf(stderr,
               "reducetune: %s error %d in `%s` at %s:%d (ignored in cleanup; repeats of it "
               "are not shown)\n",
               api, code, call, file, line);
}

} // namespace reducetune::detail
