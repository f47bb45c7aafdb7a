// The persistent compile cache: a program compiled in one process is found in the SQLite
// store by the next, which loads it without running NVRTC.
#include "catch.hpp"

#include "reducetune/jit/compile_cache.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/store_cache.hpp"

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace reducetune;

namespace {

template_library toy_library() {
  template_library lib;
  lib.put("toy/toy.cu", R"(
namespace toy {
template <typename T> __global__ void negate(const T* in, T* out, unsigned long long n) {
  const unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) out[i] = -in[i];
}
})");
  return lib;
}

compile_request negate_request(const std::string &type) {
  compile_request r;
  r.source_path = "toy/toy.cu";
  r.name_expressions = {"toy::negate<" + type + ">"};
  r.arch = "sm_90";
  return r;
}

std::filesystem::path fresh_database(const char *name) {
  const auto path = std::filesystem::temp_directory_path() /
                    (std::string{name} + "-" + std::to_string(::getpid()) + ".db");
  for (const char *suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path.string() + suffix);
  return path;
}

} // namespace

TEST_CASE("A program compiled by another process is served from the store without NVRTC",
          "[jit][cache][db]") {
  const auto path = fresh_database("rt-store-cache");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int status = 1;
    try {
      compiler c(toy_library(),
                 std::make_shared<compile_cache>(std::make_shared<store_cache_backend>(path)));
      status = c.compile(negate_request("float"))->cubin.empty() ? 2 : 0;
    } catch (...) {
      status = 3;
    }
    ::_exit(status);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  compiler here(toy_library(),
                std::make_shared<compile_cache>(std::make_shared<store_cache_backend>(path)));
  const auto loaded = here.compile(negate_request("float"));
  REQUIRE(here.cache().hits() == 1);
  REQUIRE(here.cache().misses() == 0);
  REQUIRE(loaded->cubin.compare(0, 4, "\x7f" "ELF") == 0);

  // The same bytes and kernel names as compiling afresh (no backend).
  compiler fresh(toy_library());
  const auto compiled = fresh.compile(negate_request("float"));
  REQUIRE(loaded->cubin == compiled->cubin);
  REQUIRE(loaded->mangled("toy::negate<float>") == compiled->mangled("toy::negate<float>"));
  REQUIRE(loaded->options == compiled->options);

  // Another instantiation is a miss, compiled and then stored too.
  (void)here.compile(negate_request("double"));
  REQUIRE(here.cache().misses() == 1);
  compiler third(toy_library(),
                 std::make_shared<compile_cache>(std::make_shared<store_cache_backend>(path)));
  (void)third.compile(negate_request("double"));
  REQUIRE(third.cache().hits() == 1);
  for (const char *suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path.string() + suffix);
}
