// The launches of one reduction per protocol (cuda/reduction_steps), decided once for the
// runner and the runtime: checked without a GPU (kernel handles are opaque tokens here).
#include "catch.hpp"

#include "reducetune/cuda/reduction_steps.hpp"
#include "reducetune/errors.hpp"

#include <cstdint>

using namespace reducetune;

namespace {

CUfunction token(std::uintptr_t i) { return reinterpret_cast<CUfunction>(i); }
const reduction_kernels kernels{token(1), token(2), token(3)}; // pass, final, init
char in_[1], out_[1], partials_[1], ping_[1], pong_[1];
const reduction_buffers buffers{out_, partials_, ping_, pong_};

auto blocks_of(std::uint64_t per_block) {
  return [per_block](std::uint64_t n) { return (n + per_block - 1) / per_block; };
}

} // namespace

TEST_CASE("two passes: blocks write partials, one block combines them into out",
          "[cuda][steps]") {
  const auto s = plan_reduction(protocol::two_pass, kernels, blocks_of(1024), 256, 64, in_,
                                1 << 20, buffers);
  REQUIRE(s.size() == 2);
  CHECK(s[0].kernel == token(1));
  CHECK(s[0].grid == 1024);
  CHECK(s[0].in == in_);
  CHECK(s[0].partials == partials_);
  CHECK(s[1].kernel == token(2));
  CHECK(s[1].grid == 1);
  CHECK(s[1].in == partials_);
  CHECK(s[1].n == 1024);
  CHECK(s[1].out == out_);
}

TEST_CASE("two passes of one block: one launch whose partial lands in out", "[cuda][steps]") {
  const auto s = plan_reduction(protocol::two_pass, kernels, blocks_of(4096), 256, 0, in_, 4000,
                                buffers);
  REQUIRE(s.size() == 1);
  CHECK(s[0].grid == 1);
  CHECK(s[0].partials == out_);
}

TEST_CASE("atomics: the identity first, then the pass; ticket and host: the pass alone",
          "[cuda][steps]") {
  const auto a = plan_reduction(protocol::atomic, kernels, blocks_of(1024), 256, 0, in_, 1 << 20,
                                buffers);
  REQUIRE(a.size() == 2);
  CHECK((a[0].kernel == token(3) && a[0].grid == 1 && a[0].block == 1 && a[0].out == out_));
  CHECK((a[1].kernel == token(1) && a[1].grid == 1024 && a[1].out == out_));
  for (const protocol p : {protocol::ticket, protocol::host}) {
    const auto t = plan_reduction(p, kernels, blocks_of(1024), 256, 0, in_, 1 << 20, buffers);
    REQUIRE(t.size() == 1);
    CHECK((t[0].grid == 1024 && t[0].partials == partials_ && t[0].out == out_));
  }
}

TEST_CASE("multipass: passes alternate between ping and pong until one block writes out",
          "[cuda][steps]") {
  const auto s = plan_reduction(protocol::multipass, kernels, blocks_of(256), 256, 0, in_,
                                1000000, buffers);
  REQUIRE(s.size() == 3); // 1000000 -> 3907 -> 16 -> 1
  CHECK((s[0].in == in_ && s[0].out == ping_ && s[0].grid == 3907 && s[0].n == 1000000));
  CHECK((s[1].in == ping_ && s[1].out == pong_ && s[1].grid == 16 && s[1].n == 3907));
  CHECK((s[2].in == pong_ && s[2].out == out_ && s[2].grid == 1 && s[2].n == 16));
}

TEST_CASE("plans that cannot run are refused", "[cuda][steps][errors]") {
  CHECK_THROWS_AS(plan_reduction(protocol::multipass, kernels, [](std::uint64_t n) { return n; },
                                 256, 0, in_, 100, buffers),
                  invalid_configuration);
  CHECK_THROWS_AS(plan_reduction(protocol::ticket, kernels, [](std::uint64_t) { return 0; }, 256,
                                 0, in_, 100, buffers),
                  invalid_configuration);
  CHECK_THROWS_AS(plan_reduction(protocol::two_pass, {token(1), nullptr, nullptr},
                                 blocks_of(256), 256, 0, in_, 1 << 20, buffers),
                  invalid_configuration);
  CHECK_THROWS_AS(checked_grid(std::uint64_t{1} << 31, 1), invalid_configuration);
}
