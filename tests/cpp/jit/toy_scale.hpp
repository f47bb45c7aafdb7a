// The NVRTC tests' toy template library: a scale kernel, templated on its type and factor,
// whose body is in a header (so that a header's edit changes the cache key), and the request
// for one instantiation. No GPU needed: NVRTC compiles it to sm_90.
#pragma once

#include "reducetune/jit/compiler.hpp"
#include "reducetune/templates/template_library.hpp"

#include <string>

namespace rt_test {

inline constexpr const char *scale_source = R"(
#include "toy/scale.cuh"
namespace toy {
template <typename T, int Factor>
__global__ void scale(const T* in, T* out, unsigned long long n) {
  const unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) out[i] = times<T, Factor>(in[i]);
}
}
)";

inline constexpr const char *scale_header = R"(
#pragma once
namespace toy {
template <typename T, int Factor> __device__ T times(T x) { return x * Factor; }
}
)";

inline reducetune::template_library toy_library() {
  reducetune::template_library lib;
  lib.put("toy/toy.cu", scale_source);
  lib.put("toy/scale.cuh", scale_header);
  return lib;
}

inline reducetune::compile_request scale_request(const std::string &type, int factor) {
  reducetune::compile_request r;
  r.source_path = "toy/toy.cu";
  r.name_expressions = {"toy::scale<" + type + ", " + std::to_string(factor) + ">"};
  r.arch = "sm_90";
  return r;
}

} // namespace rt_test
