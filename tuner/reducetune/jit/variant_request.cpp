#include "reducetune/jit/variant_request.hpp"

#include "reducetune/space/name_pattern.hpp"

#include <cstdlib>
#include <filesystem>

#ifndef RT_CUDA_INCLUDE_DIR
#define RT_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace reducetune {

// The toolkit folder holding cuda_fp16.h: $CUDA_HOME/include, else the build's toolkit, else
// /usr/local/cuda/include (as the device runtime library is found, jit/nvrtc_link.cpp).
std::string half_headers_folder() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    candidates.emplace_back(fs::path(home) / "include");
  candidates.emplace_back(RT_CUDA_INCLUDE_DIR);
  candidates.emplace_back("/usr/local/cuda/include");
  for (const auto &c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "cuda_fp16.h", ec)) return c.string();
  }
  return candidates.back().string(); // NVRTC's log then names the missing header
}

std::string arch_name(int arch) { return "sm_" + std::to_string(arch); }

compile_request request_for(const family &f, const variant &v, int arch) {
  compile_request r;
  r.source_path = f.name + "/" + f.source;
  for (const auto &[role, expr] : kernel_names(f, v))
    r.name_expressions.push_back(expr);
  r.arch = arch_name(arch);
  r.rdc = f.requires_rdc;
  r.include_folders = f.includes;
  // Only half-type variants parse the toolkit's fp16/bf16 headers (common/rt_types.cuh).
  if (is_half(v.type))
    r.extra_options = {"--include-path=" + half_headers_folder(), "-DRT_HALF_TYPES=1"};
  return r;
}

} // namespace reducetune
