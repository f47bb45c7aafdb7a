// On the GPU: the split finish (kernel_templates/axis/axis.cuh, final_pass) combines an output's
// partials in the order the family promises, bit for bit: lane l takes the identity, then
// s = l, l + 32, ... in increasing s, then the lanes meet in a shuffle tree (__shfl_down_sync by
// 16, 8, 4, 2, 1), whatever batch of loads a lane issues ahead, whatever block the launcher
// gives it, and where a split of fewer than 32 blocks gives an output only that many lanes. The partials are written here, not by a pass, so that their values are hostile to
// any other order: magnitudes that cancel (sum), -0.0 beside +0.0, NaN and infinities (min and
// max), and part counts that leave lanes with different numbers of partials and a last batch
// part full. The host emulates that order and every output must come out with its bits.
#include "catch.hpp"
#include "gpu_context.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/driver_api.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/space/space.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

// splitmix64: a partial's value is a function of (output, s) alone.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The device operators (common/rt_ops.cuh), for the accumulators float and double.
template <class A> A combine(reduce_op op, A a, A b) {
  if (op == reduce_op::min) return b < a ? b : a;
  if (op == reduce_op::max) return a < b ? b : a;
  return a + b;
}

template <class A> A identity(reduce_op op) {
  if (op == reduce_op::min) return std::numeric_limits<A>::infinity();
  if (op == reduce_op::max) return -std::numeric_limits<A>::infinity();
  return A(0);
}

// Partial s of output j. Output 0 is all -0.0: its sum is +0.0 only because each lane starts
// from the identity, its min and max -0.0. The others mix large values that cancel, small ones
// that vanish beside them in one order and not in another, signed zeros, and for min and max
// NaN and infinities.
template <class A> A partial(reduce_op op, std::uint64_t j, std::uint64_t s) {
  const std::uint64_t h = mix(j * 4099 + s);
  if (j == 0) return A(-0.0);
  const A sign = (h >> 7) & 1 ? A(1) : A(-1);
  switch (h % 8) {
  case 0: return sign * A(0x1p40);
  case 1: return sign * A(0.0);
  case 2:
    if (op == reduce_op::sum) return sign * A(0x1p-20); // lost beside 2^40 in some orders
    if ((h >> 9) % 4 == 0) return std::numeric_limits<A>::quiet_NaN();
    return sign * std::numeric_limits<A>::infinity();
  default: return sign * A(static_cast<double>(h >> 11) * 0x1p-53);
  }
}

// The finish's order on the host: lanes, then the shuffle tree into lane 0.
template <class A>
A emulated(reduce_op op, const std::vector<A> &partials, std::uint64_t j, unsigned parts) {
  A lane[32];
  for (unsigned l = 0; l < 32; ++l) {
    lane[l] = identity<A>(op);
    for (unsigned s = l; s < parts; s += 32) lane[l] = combine(op, lane[l], partials[j * parts + s]);
  }
  for (unsigned off = 16; off > 0; off >>= 1)
    for (unsigned l = 0; l + off < 32; ++l) lane[l] = combine(op, lane[l], lane[l + off]);
  return lane[0];
}

// Launches the plan's finish alone over `partials` (the pass would overwrite them).
void launch_finish(const axis_kernels &k, const axis_plan &plan, void *out, void *partials) {
  const void *in = nullptr;
  unsigned long long outer = plan.shape.outer, r = plan.shape.r, inner = plan.shape.inner;
  void *args[] = {&in, &out, &outer, &r, &inner, &partials};
  RT_DRIVER_CALL(driver_api::get().cuLaunchKernel(
      k.final, static_cast<unsigned>(plan.final_grid), 1, 1, plan.final_block_size, 1, 1, 0,
      nullptr, args, nullptr));
  RT_CUDA_CALL(cudaDeviceSynchronize());
}

template <class A> void check_finish(dtype t, reduce_op op) {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  const search_space s(f, t, op, g.limits);
  compiler c(g.lib);
  // split 4 and 16 (that many lanes per output, finish_lanes: the 32-lane order's bits is the
  // claim), 64 (a batch of 2 a lane), 512 (one batch of 16) and 1024 (two batches of 16)
  const std::vector<std::int64_t> splits{4, 16, 64, 512, 1024};
  std::vector<point> points;
  std::vector<compile_request> requests;
  for (const std::int64_t split : splits) {
    points.push_back(s.point_of({{"strategy", std::string("split")},
                                 {"lanes", std::int64_t{1}},
                                 {"block_size", std::int64_t{512}},
                                 {"vec", std::int64_t{1}},
                                 {"split", split}}));
    REQUIRE(s.check(points.back()).ok());
    requests.push_back(request_for(f, points.back().compile, g.limits.arch));
  }
  const auto outcomes = c.compile_batch(requests);
  for (std::size_t i = 0; i < splits.size(); ++i) {
    INFO(outcomes[i].error.substr(0, 2000));
    REQUIRE(outcomes[i].program);
    const point &p = points[i];
    const std::int64_t split = splits[i];
    const loaded_module module(*outcomes[i].program);
    // r >= split: every chunk full (parts == split); r = 1000, 33 and 3: parts not a multiple
    // of 32 (lanes own different counts, a batch is cut short) or fewer than the lanes
    for (const std::uint64_t r : {std::uint64_t{1} << 20, std::uint64_t{1000}, std::uint64_t{33},
                                  std::uint64_t{3}})
      for (const std::uint64_t outputs : {std::uint64_t{64}, std::uint64_t{1000}}) {
        const axis_plan plan = plan_axis(s, p, {outputs, r, 1});
        const auto parts = static_cast<unsigned>(plan.parts);
        INFO(to_string(t) << "." << to_string(op) << " split " << split << " r " << r
                          << " outputs " << outputs << " parts " << parts);
        std::vector<A> host(std::size_t{parts} * outputs);
        for (std::uint64_t j = 0; j < outputs; ++j)
          for (unsigned k = 0; k < parts; ++k) host[j * parts + k] = partial<A>(op, j, k);
        device_buffer partials(host.size() * sizeof(A)), out(outputs * sizeof(A));
        partials.upload(host.data(), partials.size());
        RT_CUDA_CALL(cudaMemset(out.data(), 0xa5, out.size())); // no stale result passes
        launch_finish(resolve_axis(module, plan), plan, out.data(), partials.data());
        std::vector<A> got(outputs);
        out.download(got.data(), out.size());
        std::uint64_t differ = 0;
        for (std::uint64_t j = 0; j < outputs; ++j) {
          const A want = emulated(op, host, j, parts);
          if (std::memcmp(&got[j], &want, sizeof(A)) != 0 && ++differ <= 3)
            UNSCOPED_INFO("output " << j << ": " << got[j] << ", the order gives " << want);
        }
        CHECK(differ == 0);
      }
  }
}

} // namespace

TEST_CASE("The split finish gives each output the bits of its order: lanes in increasing s, "
          "then the shuffle tree",
          "[gpu][axis][finish]") {
  check_finish<float>(dtype::float32, reduce_op::sum);
  check_finish<float>(dtype::float32, reduce_op::min);
  check_finish<float>(dtype::float32, reduce_op::max);
  check_finish<double>(dtype::float64, reduce_op::sum);
  check_finish<double>(dtype::float64, reduce_op::max);
}
