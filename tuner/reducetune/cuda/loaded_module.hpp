// A compiled_program loaded into the current context (cuModuleLoadData), and its kernels
// looked up by name expression through the program's lowered (mangled) names. Compiling
// (jit/) and loading (here) are separate steps: a cubin never needs a GPU until now.
#pragma once

#include "reducetune/jit/compiler.hpp"

#include <cuda.h>

#include <map>
#include <string>

namespace reducetune {

class loaded_module {
public:
  // Makes the device's primary context current (through the runtime) and loads the cubin.
  explicit loaded_module(const compiled_program &program);
  ~loaded_module();
  loaded_module(loaded_module &&other) noexcept;
  loaded_module &operator=(loaded_module &&other) noexcept;
  loaded_module(const loaded_module &) = delete;
  loaded_module &operator=(const loaded_module &) = delete;

  // Throws invalid_configuration when the program has no such name expression.
  [[nodiscard]] CUfunction function(const std::string &name_expression) const;

private:
  CUmodule m_module = nullptr;
  std::map<std::string, std::string> m_lowered;
};

} // namespace reducetune
