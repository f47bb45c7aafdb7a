// What the probes that load NVRTC's cubins share (launch_probe.cu, prepare_probe.cu): the
// driver API's error check and a kernel file compiled by NVRTC with reducetune's options
// (jit/compiler.cpp options_for: sm_90, C++17, -minimal). Both link -lnvrtc -lcuda.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cuda.h>
#include <nvrtc.h>

#define DRV(x)                                                                                \
  do {                                                                                        \
    CUresult r_ = (x);                                                                        \
    if (r_ != CUDA_SUCCESS) {                                                                 \
      const char *s_ = nullptr;                                                               \
      cuGetErrorString(r_, &s_);                                                              \
      std::printf("%s: %s\n", #x, s_ ? s_ : "?");                                             \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// The cubin of the kernel file at `path`, or the program's exit with NVRTC's log. `extra`:
// options after reducetune's (an include path); `names`: name expressions (template
// instantiations) to add, each replaced by its lowered (mangled) name on return.
inline std::vector<char> nvrtc_cubin(const std::string &path,
                                     const std::vector<std::string> &extra = {},
                                     std::vector<std::string> *names = nullptr) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  const std::string src = text.str();
  if (src.empty()) {
    std::printf("cannot read %s\n", path.c_str());
    std::exit(1);
  }
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, src.c_str(), "probe_kernel.cu", 0, nullptr, nullptr);
  if (names)
    for (const std::string &e : *names) nvrtcAddNameExpression(prog, e.c_str());
  std::vector<const char *> opts = {"--gpu-architecture=sm_90", "-std=c++17", "-minimal"};
  for (const std::string &o : extra) opts.push_back(o.c_str());
  if (nvrtcCompileProgram(prog, int(opts.size()), opts.data()) != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::printf("NVRTC: %s\n", log.c_str());
    std::exit(1);
  }
  if (names)
    for (std::string &e : *names) {
      const char *lowered = nullptr;
      nvrtcGetLoweredName(prog, e.c_str(), &lowered);
      e = lowered;
    }
  size_t n = 0;
  nvrtcGetCUBINSize(prog, &n);
  std::vector<char> cubin(n);
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  return cubin;
}
