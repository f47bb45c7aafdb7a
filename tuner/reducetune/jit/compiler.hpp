// NVRTC compilation of template instantiations into cubin, batched, cached and parallel.
//
// Stages are separate types (jitify2's habit): a compile_request is data; compiling gives a
// compiled_program (cubin + lowered names + log), which never touches a GPU; loading a
// compiled_program into a context is the runner's business (cuda/module.hpp).
#pragma once

#include "reducetune/jit/template_library.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace reducetune {

struct compile_request {
  std::string source_path;                   // main source, in the template library
  std::vector<std::string> name_expressions; // instantiations to emit (deduplicated)
  std::string arch = "sm_90";                // real architecture: cubin, not PTX
  std::vector<std::string> extra_options;    // appended to the standard options
  bool rdc = false;                          // relocatable code + device runtime via nvJitLink
};

struct compiled_program {
  std::string cubin;                              // loadable image (linked when rdc)
  std::map<std::string, std::string> lowered;     // name expression -> mangled name
  std::string log;                                // NVRTC log, kept on success too
  std::vector<std::string> options;               // the exact options used
  double compile_seconds = 0.0;                   // wall time of the NVRTC (+ link) work
  std::string key;                                // cache key (hex), see compile_cache

  [[nodiscard]] const std::string &mangled(const std::string &name_expression) const;
};

} // namespace reducetune
