// On the GPU: a sequence that writes no result never passes the verification of
// sample_copies (measure/sample_copies.hpp, copy_poison). Its output buffer already holds the
// right answer, as when the point measured before it left it there: a freed and reallocated
// buffer often comes back at the same address, and the workload is the same. Without poison,
// the checks read that stale answer and pass; with it, each checked run finds 0xFF or 0x7F
// bytes, never the answer.
#include "catch.hpp"
#include "short_sampling.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/measure/sample_copies.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

using namespace reducetune;

namespace {

constexpr float answer = 4096.0f; // what a previous point left in the buffer

// One copy whose "sequence" launches nothing, and a check that its result is the answer.
struct silent_copy {
  device_buffer out{sizeof(float)};
  silent_copy() { out.upload(&answer, sizeof answer); }

  [[nodiscard]] verdict check() const {
    float got = 0;
    out.download(&got, sizeof got);
    verdict v;
    v.ok = got == answer;
    v.reason = v.ok ? "the answer" : "not the answer";
    return v;
  }
};

sampled_copies sampled(silent_copy &c, const copy_poison &poison) {
  stream s;
  l2_flush flush(1 << 20);
  const graph_replay::runner nothing = [](cudaStream_t, std::size_t) {};
  return sample_copies(nothing, [&](std::size_t) { return c.check(); }, 1, s, flush,
                       rt_test::short_sampling(3, 0.05), poison);
}

} // namespace

TEST_CASE("a sequence that writes no result fails the checks once its result is poisoned",
          "[gpu][poison]") {
  silent_copy stale; // (without a GPU the GPU tests' main exits 77: skipped)
  CHECK(sampled(stale, {}).before.ok); // the hole: the stale answer passes

  silent_copy poisoned;
  const copy_poison poison = [&](cudaStream_t s, std::size_t, unsigned char byte) {
    REQUIRE(cudaMemsetAsync(poisoned.out.data(), byte, poisoned.out.size(), s) == cudaSuccess);
  };
  const sampled_copies r = sampled(poisoned, poison);
  CHECK_FALSE(r.before.ok);
  CHECK(r.before.reason == "not the answer");
}
