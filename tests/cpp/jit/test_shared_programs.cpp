// The GPU workers of one `tune --devices` run share what they compile (issue 25): each worker's
// compiler stores its programs in the run's folder (jit/folder_cache.hpp), another worker's
// background threads load them instead of compiling them again, and leave to it what it is
// compiling now (its claim). Each compiler here stands for one worker process: they share
// nothing but the folder, as the processes do. No GPU needed.
#include "catch.hpp"
#include "toy_scale.hpp"

#include "reducetune/jit/compile_ahead.hpp"
#include "reducetune/jit/compile_cache.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/folder_cache.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

using namespace reducetune;
using rt_test::scale_request;
using rt_test::toy_library;

namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const char *name) {
  const auto path = fs::temp_directory_path() /
                    (std::string{name} + "-" + std::to_string(::getpid()));
  fs::remove_all(path);
  return path;
}

// One worker's compiler, its cache backed by the run's folder.
std::unique_ptr<compiler> worker_compiler(const fs::path &folder) {
  return std::make_unique<compiler>(
      toy_library(),
      std::make_shared<compile_cache>(std::make_shared<folder_cache_backend>(folder)));
}

std::vector<compile_request> scale_requests(int count) {
  std::vector<compile_request> out;
  for (int f = 1; f <= count; ++f) out.push_back(scale_request("float", f));
  return out;
}

// One thread (counts are exact), `chunk` requests a program.
ahead_counts compiled_ahead(compiler &c, std::vector<compile_request> requests,
                            unsigned chunk = 1) {
  compile_ahead ahead(c, 1, 0, chunk);
  ahead.queue(std::move(requests));
  ahead.wait_idle();
  return ahead.counts();
}

} // namespace

TEST_CASE("Each GPU worker of a run compiles on its share of the host's threads",
          "[jit][ahead][shared]") {
  // one worker keeps every hardware thread but the measuring one
  REQUIRE(compile_ahead::threads_for(16, 1) == 15);
  REQUIRE(compile_ahead::threads_for(2, 1) == 1);
  REQUIRE(compile_ahead::threads_for(1, 1) == 1);
  REQUIRE(compile_ahead::threads_for(0, 1) == 1); // hardware_concurrency() may not know
  // N workers: hardware / N, at least one, at most max_default_threads
  REQUIRE(compile_ahead::threads_for(16, 2) == 8);
  REQUIRE(compile_ahead::threads_for(16, 4) == 4);
  REQUIRE(compile_ahead::threads_for(2, 4) == 1);
  REQUIRE(compile_ahead::threads_for(64, 4) == 16);
  REQUIRE(compile_ahead::threads_for(128, 8) == 16);
  REQUIRE(compile_ahead::threads_for(256, 2) == compile_ahead::max_default_threads);
}

TEST_CASE("A short queue is spread over every thread of the workers sharing it",
          "[jit][ahead][shared]") {
  // the 4 x H200 sweep: 95 variants, 4 workers of 16 threads: 2 a program, not 8
  REQUIRE(compile_ahead::chunk_for(95, 16, 4, 8) == 2);
  REQUIRE(compile_ahead::chunk_for(95, 15, 1, 8) == 7); // one GPU
  REQUIRE(compile_ahead::chunk_for(9456, 16, 4, 8) == 8); // the README's run: as many as allowed
  REQUIRE(compile_ahead::chunk_for(3, 16, 1, 8) == 1);
  REQUIRE(compile_ahead::chunk_for(0, 16, 1, 8) == 1);
  REQUIRE(compile_ahead::chunk_for(95, 0, 0, 8) == 8); // nonsense counts read as one
  // and the threads take programs of that size: 4 requests on 2 threads, 2 a program
  compiler c(toy_library());
  {
    compile_ahead ahead(c, 2, 0, 8);
    ahead.queue(scale_requests(4));
    ahead.wait_idle();
    REQUIRE(ahead.counts().compiled == 4);
  }
  REQUIRE(c.programs_compiled() == 2);
}

TEST_CASE("A program another worker compiled into the run's folder is loaded, not compiled",
          "[jit][ahead][shared]") {
  const auto folder = fresh_folder("rt-shared-programs");
  auto first = worker_compiler(folder);
  auto second = worker_compiler(folder);

  const auto by_first = compiled_ahead(*first, scale_requests(3));
  REQUIRE(by_first.compiled == 3);
  REQUIRE(by_first.loaded == 0);

  const auto by_second = compiled_ahead(*second, scale_requests(4));
  REQUIRE(by_second.loaded == 3);   // the first worker's three
  REQUIRE(by_second.compiled == 1); // the fourth, which nobody had
  REQUIRE(second->programs_compiled() == 1);
  for (const auto &r : scale_requests(3)) {
    // the second's evaluation gets the first's cubin from its memory, compiling nothing
    const auto program = second->compile(r);
    REQUIRE(program->cubin == first->cache().peek(first->key_of(r))->cubin);
  }
  REQUIRE(second->programs_compiled() == 1);
  // and the first's evaluation of the fourth loads the second's program
  const auto fourth = first->compile(scale_request("float", 4));
  REQUIRE(first->programs_compiled() == 3);
  REQUIRE(fourth->cubin == second->cache().peek(second->key_of(scale_request("float", 4)))->cubin);
  fs::remove_all(folder);
}

TEST_CASE("A worker's background leaves to another worker the program it is compiling",
          "[jit][ahead][shared]") {
  const auto folder = fresh_folder("rt-shared-claims");
  auto other = worker_compiler(folder);
  auto mine = worker_compiler(folder);
  const auto request = scale_request("double", 3);
  const std::string key = mine->key_of(request);

  // another worker compiles it now: its claim is in the folder
  REQUIRE(other->cache().claim(key));
  REQUIRE_FALSE(mine->cache().claim(key));
  const auto while_claimed = compiled_ahead(*mine, {request});
  REQUIRE(while_claimed.skipped == 1);
  REQUIRE(while_claimed.compiled == 0);
  REQUIRE(mine->programs_compiled() == 0);

  // an evaluation does not wait for the claim: it compiles the program it needs
  REQUIRE(mine->compile(request)->cubin.compare(0, 4, "\x7f"
                                                      "ELF") == 0);
  REQUIRE(mine->programs_compiled() == 1);

  // released, and stored by the evaluation: the other worker's background loads it
  other->cache().release(key);
  REQUIRE_FALSE(fs::exists(folder / (key + ".claim")));
  const auto after = compiled_ahead(*other, {request});
  REQUIRE(after.loaded == 1);
  REQUIRE(other->programs_compiled() == 0);
  fs::remove_all(folder);
}

TEST_CASE("A background compile stores a program once and releases its claims once stored",
          "[jit][ahead][shared]") {
  const auto folder = fresh_folder("rt-shared-release");
  auto c = worker_compiler(folder);
  const auto counts = compiled_ahead(*c, scale_requests(3), 3); // one program, three keys
  REQUIRE(counts.compiled == 3);
  REQUIRE(c->programs_compiled() == 1);
  std::size_t images = 0, entries = 0, claims = 0;
  for (const auto &f : fs::directory_iterator(folder)) {
    images += f.path().extension() == ".cubin";
    entries += f.path().extension() == ".json";
    claims += f.path().extension() == ".claim";
  }
  REQUIRE(images == 1); // the program's cubin, written once for its three keys
  REQUIRE(entries == 3);
  REQUIRE(claims == 0);
  // another worker loads each key: the same image, with every kernel of the program
  auto other = worker_compiler(folder);
  for (const auto &r : scale_requests(3)) {
    const auto program = other->compile(r);
    REQUIRE(program->lowered.size() == 3);
    REQUIRE(program->cubin == c->cache().peek(c->key_of(r))->cubin);
  }
  REQUIRE(other->programs_compiled() == 0);
  fs::remove_all(folder);
}
