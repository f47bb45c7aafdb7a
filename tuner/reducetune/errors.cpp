#include "reducetune/errors.hpp"

#include "reducetune/cuda/driver_api.hpp"

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <cstdio>
#include <string>

namespace reducetune::detail {
namespace {

std::string where(const char *call, const char *file, int line) {
  return std::string{" in `"} + call + "` at " + file + ":" + std::to_string(line);
}

std::string driver_error_text(int code) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (driver_api::available()) {
    driver_api::get().cuGetErrorName(static_cast<CUresult>(code), &name);
    driver_api::get().cuGetErrorString(static_cast<CUresult>(code), &text);
  }
  return std::string{name ? name : "CUresult"} + " (" + std::to_string(code) +
         "): " + (text ? text : "unknown driver error");
}

} // namespace

void throw_cuda_runtime(int code, const char *call, const char *file, int line) {
  const auto status = static_cast<cudaError_t>(code);
  // Reading the last error clears a non-sticky error so that the next call starts clean.
  (void)cudaGetLastError();
  const std::string msg = std::string{"CUDA error "} + cudaGetErrorName(status) + " (" +
                          std::to_string(code) + "): " + cudaGetErrorString(status) +
                          where(call, file, line);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
    throw device_error(msg);
  throw launch_error(msg);
}

void throw_cuda_driver(int code, const char *call, const char *file, int line) {
  const std::string msg = "CUDA driver error " + driver_error_text(code) + where(call, file, line);
  if (code == CUDA_ERROR_NO_DEVICE || code == CUDA_ERROR_NOT_INITIALIZED)
    throw device_error(msg);
  throw launch_error(msg);
}

void throw_nvrtc(int code, const char *call, const char *file, int line) {
  throw compile_error(std::string{"NVRTC error "} +
                          nvrtcGetErrorString(static_cast<nvrtcResult>(code)) +
                          where(call, file, line),
                      {});
}

void report_noexcept(const char *api, int code, const char *call, const char *file,
                     int line) noexcept {
  std::fprintf(stderr, "reducetune: %s error %d in `%s` at %s:%d (ignored in cleanup)\n", api,
               code, call, file, line);
}

} // namespace reducetune::detail
