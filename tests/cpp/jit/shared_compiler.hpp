// One compiler, and so one compile cache, for the NVRTC tests that tests/CMakeLists.txt links
// into one executable (test_jit_compile): test_compile_space compiles every preset of every
// family for every type and operator, and test_cubin_shared_memory and test_axis_compile
// compile many of the same presets again. Sharing the cache compiles each of them once per
// run (about a fifth of these tests' NVRTC time on the 2-core CI machine); a compile that
// fails still fails the first test that asks for it, and the others see no program.
#pragma once

#include "reducetune/jit/compiler.hpp"
#include "reducetune/templates/template_library.hpp"

namespace rt_test {

// The compiler of the embedded template library (test-only families need their own).
inline reducetune::compiler &shared_compiler() {
  static reducetune::compiler c(reducetune::template_library::embedded());
  return c;
}

} // namespace rt_test
