#include "reducetune/cuda/driver_api.hpp"

#include "reducetune/errors.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace reducetune::driver_api {
namespace {

struct loaded {
  table functions;
  std::string failure; // empty when every entry point resolved
};

loaded load() noexcept {
  loaded result;
  const auto resolve = [&](const char *symbol, void **slot) {
    if (!result.failure.empty())
      return;
    cudaDriverEntryPointQueryResult status{};
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion(symbol, slot, CUDA_VERSION, cudaEnableDefault, &status);
    if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || *slot == nullptr) {
      result.failure = std::string{"the CUDA driver entry point "} + symbol +
                       " is unavailable (" + cudaGetErrorString(err) + ")";
      (void)cudaGetLastError();
    }
  };
#define RT_RESOLVE(name) resolve(#name, reinterpret_cast<void **>(&result.functions.name));
  RT_DRIVER_FUNCTIONS(RT_RESOLVE)
#undef RT_RESOLVE
  return result;
}

const loaded &instance() noexcept {
  static const loaded once = load();
  return once;
}

std::string error_text(int code) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (available()) {
    instance().functions.cuGetErrorName(static_cast<CUresult>(code), &name);
    instance().functions.cuGetErrorString(static_cast<CUresult>(code), &text);
  }
  return std::string{name ? name : "CUresult"} + " (" + std::to_string(code) +
         "): " + (text ? text : "unknown driver error");
}

} // namespace

bool available() noexcept { return instance().failure.empty(); }

const table &get() {
  const loaded &l = instance();
  if (!l.failure.empty())
    throw device_error("no usable CUDA driver: " + l.failure);
  return l.functions;
}

void throw_error(int code, const char *call, const char *file, int line) {
  const std::string msg =
      "CUDA driver error " + error_text(code) + detail::call_site(call, file, line);
  if (code == CUDA_ERROR_NO_DEVICE || code == CUDA_ERROR_NOT_INITIALIZED)
    throw device_error(msg);
  throw launch_error(msg);
}

} // namespace reducetune::driver_api
