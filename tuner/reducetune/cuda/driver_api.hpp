// The CUDA driver API, reached through the runtime's entry-point query instead of linking
// libcuda.
//
// Why: the library and every test binary must start on machines with no GPU driver (CI, the
// developers' machines). The runtime is linked statically and finds libcuda itself; when there
// is none, available() is false and callers report "no GPU" instead of failing to load.
#pragma once

#include "reducetune/errors.hpp"

#include <cuda.h>

namespace reducetune::driver_api {

// Function pointers for the driver calls reducetune uses; the list is the single source.
#define RT_DRIVER_FUNCTIONS(X)                                                                 \
  X(cuGetErrorName)                                                                            \
  X(cuGetErrorString)                                                                          \
  X(cuModuleLoadData)                                                                          \
  X(cuModuleUnload)                                                                            \
  X(cuModuleGetFunction)                                                                       \
  X(cuFuncGetAttribute)                                                                        \
  X(cuFuncSetAttribute)                                                                        \
  X(cuLaunchKernel)                                                                            \
  X(cuLaunchKernelEx)

struct table {
#define RT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  RT_DRIVER_FUNCTIONS(RT_DECLARE_POINTER)
#undef RT_DECLARE_POINTER
};

// True when libcuda was found and every function above resolved.
[[nodiscard]] bool available() noexcept;

// The resolved table; throws device_error (with the reason) when the driver is unavailable.
[[nodiscard]] const table &get();

// The message of a failed driver call: "CUDA driver error NAME (code): text in `call` at
// file:line". Raises device_error for CUDA_ERROR_NO_DEVICE / NOT_INITIALIZED, else launch_error.
[[noreturn]] void throw_error(int code, const char *call, const char *file, int line);

} // namespace reducetune::driver_api

// CUDA driver API (CUresult); the error's name and text come from the driver itself.
#define RT_DRIVER_CALL(call) RT_DETAIL_CHECK(call, #call, ::reducetune::driver_api::throw_error)

// For destructors and other noexcept paths: report, never throw (errors.hpp).
#define RT_DRIVER_CALL_NOEXCEPT(call)                                                          \
  RT_DETAIL_CHECK(call, #call, ::reducetune::detail::noexcept_reporter{"CUDA driver"})
