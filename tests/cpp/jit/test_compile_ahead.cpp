// Compiling ahead on background threads (jit/compile_ahead.hpp): what they compile is what an
// evaluation then gets, and no request is compiled twice whoever asks first. No GPU needed.
#include "catch.hpp"
#include "toy_scale.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compile_ahead.hpp"
#include "reducetune/jit/compile_cache.hpp"
#include "reducetune/jit/compiler.hpp"

#include <string>
#include <thread>
#include <vector>

using namespace reducetune;
using rt_test::scale_request;
using rt_test::toy_library;

namespace {

std::vector<compile_request> scale_requests(int count) {
  std::vector<compile_request> out;
  for (int f = 1; f <= count; ++f) out.push_back(scale_request("float", f));
  return out;
}

} // namespace

TEST_CASE("What the background compiled is the program an evaluation gets, compiled once",
          "[jit][ahead]") {
  compiler c(toy_library());
  compile_ahead ahead(c, 2, 10, 1); // one request a program
  ahead.queue(scale_requests(3));
  ahead.wait_idle();
  REQUIRE(c.programs_compiled() == 3);
  const auto before = c.cache().hits();
  for (const auto &r : scale_requests(3)) {
    const auto program = c.compile(r);
    REQUIRE(program == c.cache().peek(c.key_of(r)));
    REQUIRE(program->cubin.compare(0, 4,
                                   "\x7f"
                                   "ELF") == 0);
  }
  REQUIRE(c.cache().hits() == before + 3);
  REQUIRE(c.programs_compiled() == 3); // the evaluations compiled nothing
  const auto n = ahead.counts();
  REQUIRE(n.queued == 3);
  REQUIRE(n.compiled == 3);
  REQUIRE(n.waiting == 0);
  REQUIRE(n.busy_s > 0.0);
}

TEST_CASE("An evaluation and the background asking for one request compile it once",
          "[jit][ahead]") {
  compiler c(toy_library());
  compile_ahead ahead(c, 1);
  ahead.queue({scale_request("double", 7)});
  // whoever starts first compiles; the other joins it (evaluation) or skips it (background)
  const auto program = c.compile(scale_request("double", 7));
  ahead.wait_idle();
  REQUIRE(c.programs_compiled() == 1);
  REQUIRE(program == c.compile(scale_request("double", 7)));
  const auto n = ahead.counts();
  REQUIRE(n.compiled + n.skipped == 1);
  REQUIRE(n.failed == 0);
}

TEST_CASE("Threads asking for the same request at once share one compile", "[jit][ahead]") {
  compiler c(toy_library());
  constexpr int askers = 6;
  std::vector<std::shared_ptr<const compiled_program>> got(askers);
  std::vector<std::thread> threads;
  for (int i = 0; i < askers; ++i)
    threads.emplace_back([&, i] { got[i] = c.compile(scale_request("int", 5)); });
  for (auto &t : threads) t.join();
  REQUIRE(c.programs_compiled() == 1);
  for (const auto &p : got) REQUIRE(p == got.front());
  // those that missed the cache while it compiled waited for it; the rest were hits
  REQUIRE(c.joined() + c.cache().hits() == askers - 1);
}

TEST_CASE("A request NVRTC refuses is counted as failed and raises its log when measured",
          "[jit][ahead]") {
  compiler c(toy_library());
  compile_ahead ahead(c, 1);
  auto bad = scale_request("float", 1);
  bad.name_expressions = {"toy::scale<no_such_type, 1>"};
  ahead.queue({bad, scale_request("float", 2)});
  ahead.wait_idle();
  const auto n = ahead.counts();
  REQUIRE(n.failed == 1);
  REQUIRE(n.compiled == 1);
  REQUIRE_FALSE(c.holds(bad)); // a failure is not cached
  REQUIRE_THROWS_AS(c.compile(bad), compile_error);
}

TEST_CASE("A new queue replaces the requests still waiting", "[jit][ahead]") {
  compiler c(toy_library());
  // One request a program (chunk 1): with the default chunk of 8 the thread may take all six
  // as one program before the second queue() (a CI run of 2026-11-27: dropped == 0).
  compile_ahead ahead(c, 1, 10, 1);
  ahead.queue(scale_requests(6));
  ahead.queue({scale_request("long long", 3)});
  ahead.wait_idle();
  const auto n = ahead.counts();
  REQUIRE(n.queued == 7);
  REQUIRE(n.dropped >= 1); // the one thread had taken at most one of the six
  REQUIRE(n.compiled + n.skipped + n.failed + n.dropped == n.queued);
  REQUIRE(c.holds(scale_request("long long", 3)));
}

TEST_CASE("A thread compiles consecutive requests of one group as one program", "[jit][ahead]") {
  compiler c(toy_library());
  compile_ahead ahead(c, 1, 10, 8);
  auto requests = scale_requests(3);
  requests.push_back(scale_request("float", 1)); // a repeat: one request, not two
  ahead.queue(requests);
  ahead.wait_idle();
  REQUIRE(c.programs_compiled() == 1);
  const auto shared = c.cache().peek(c.key_of(requests.front()));
  REQUIRE(shared != nullptr);
  for (const auto &r : requests) {
    REQUIRE(c.compile(r) == shared); // each request's kernel is in the one program
    REQUIRE_FALSE(shared->mangled(r.name_expressions.front()).empty());
  }
  const auto n = ahead.counts();
  REQUIRE((n.compiled == 3 && n.skipped == 1));
}

TEST_CASE("By default the threads leave one hardware thread free, and are at most 16",
          "[jit][ahead]") {
  compiler c(toy_library());
  compile_ahead ahead(c);
  const unsigned hw = std::thread::hardware_concurrency();
  const unsigned threads = ahead.counts().threads;
  REQUIRE(threads == compile_ahead::default_threads());
  REQUIRE(threads >= 1);
  REQUIRE(threads <= compile_ahead::max_default_threads);
  REQUIRE((hw <= 1 || threads == std::min(hw - 1, compile_ahead::max_default_threads)));
}
