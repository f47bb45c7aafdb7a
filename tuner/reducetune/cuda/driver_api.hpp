// The CUDA driver API, reached through the runtime's entry-point query instead of linking
// libcuda.
//
// Why: the library and every test binary must start on machines with no GPU driver (CI, the
// developers' machines). The runtime is linked statically and finds libcuda itself; when there
// is none, available() is false and callers report "no GPU" instead of failing to load.
#pragma once

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
  X(cuLaunchKernel)

struct table {
#define RT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  RT_DRIVER_FUNCTIONS(RT_DECLARE_POINTER)
#undef RT_DECLARE_POINTER
};

// True when libcuda was found and every function above resolved.
[[nodiscard]] bool available() noexcept;

// The resolved table; throws device_error (with the reason) when the driver is unavailable.
[[nodiscard]] const table &get();

} // namespace reducetune::driver_api
