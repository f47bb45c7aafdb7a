// Linking relocatable device code with the CUDA device runtime (libcudadevrt) through
// nvJitLink, for families that launch kernels from the device (dynamic parallelism).
#pragma once

#include <string>

namespace reducetune {

// Links an -rdc=true cubin with libcudadevrt.a into a loadable cubin; throws compile_error
// with nvJitLink's log. The library is looked up in $CUDA_HOME/lib64, then in the toolkit
// folder this library was built against.
[[nodiscard]] std::string link_with_device_runtime(const std::string &cubin,
                                                   const std::string &arch);

// Where libcudadevrt.a was found (empty when it was not).
[[nodiscard]] std::string device_runtime_library();

} // namespace reducetune
