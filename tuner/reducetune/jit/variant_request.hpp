// From a point of the search space to the NVRTC request that builds it: the family's source,
// the name expressions of every kernel role, the architecture, and relocatable code for
// families that need the device runtime.
#pragma once

#include "reducetune/jit/compiler.hpp"
#include "reducetune/space/family.hpp"
#include "reducetune/space/variant.hpp"

#include <string>

namespace reducetune {

// "sm_90" for compute capability 90.
[[nodiscard]] std::string arch_name(int arch);

// The CUDA toolkit's include folder, where NVRTC finds cuda_fp16.h and cuda_bf16.h for the
// half types (float16, bfloat16).
[[nodiscard]] std::string half_headers_folder();

[[nodiscard]] compile_request request_for(const family &f, const variant &v, int arch);

} // namespace reducetune
