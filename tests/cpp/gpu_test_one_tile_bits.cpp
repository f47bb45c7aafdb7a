// On the GPU: the tunable family's one-tile path (kernel_templates/tunable/tunable.cuh,
// one_tile_reduce) gives the loop's bits. Each deterministic point of a seeded sample is
// compiled twice, as the tuner compiles it and with RT_TUNABLE_LOOP_ONLY (every launch through
// strided_reduce), and both run on the same input and grid wherever the grid holds at most one
// tile per thread: a float sum is rounded at every add, so any change in the combining order
// shows in the bits. The kernel's comment says the order is the same; this test is what shows it.
#include "catch.hpp"
#include "gpu_context.hpp"
#include "sequence_result.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/patterns.hpp"

#include <cstdio>
#include <cstring>
#include <memory>

using namespace reducetune;

namespace {

std::int64_t int_of(const family &f, const variant &v, const char *name) {
  return std::get<std::int64_t>(value_of(f, v, name));
}

// Whether the first pass over n takes the one-tile path (one_tile_fits, host side): the
// grid's tiles cover n and n is a multiple of vec (the inputs here start aligned).
bool one_tile_launch(const family &f, const variant &v, const launch_plan &plan,
                     std::uint64_t n) {
  const auto bs = int_of(f, v, "block_size"), unroll = int_of(f, v, "unroll");
  const auto vec = int_of(f, v, "vec");
  const std::uint64_t covered = plan.grid_for(n) * bs * unroll * vec;
  return n % vec == 0 && n <= covered && covered <= 0x7fffffffULL;
}

struct twin {
  variant v;
  std::unique_ptr<loaded_module> one_tile, loop_only;
};

std::vector<unsigned char> run(const loaded_module &m, const launch_plan &plan, dtype t,
                               const void *in, std::uint64_t n) {
  launch_sequence seq(m, plan, t, in, n);
  return rt_test::run_for_result(seq, t);
}

constexpr std::uint64_t sizes[] = {1024, 4096, 1u << 16, 1u << 20};
constexpr std::size_t variants_per_type = 12;

} // namespace

TEST_CASE("The tunable family's one-tile path gives the loop's bits", "[gpu][one_tile]") {
  const rt_test::gpu_context gpu;
  const auto &[device, limits, lib] = gpu;
  const family f = family::load(lib, "tunable");
  compiler c(lib);

  std::size_t compared = 0, differing_programs = 0, pairs = 0;
  for (const dtype t : all_dtypes) {
    if (is_integer(t))
      continue; // integer sums, min and max are exact in any order: nothing to tell apart
    const reduce_op o = reduce_op::sum;
    const search_space space(f, t, o, limits);
    std::vector<twin> twins;
    std::vector<compile_request> requests;
    for (const auto &v : space.sample(variants_per_type, 0x71e + static_cast<int>(t))) {
      compile_request plain = request_for(f, v, limits.arch), loop = plain;
      loop.extra_options.push_back("-DRT_TUNABLE_LOOP_ONLY=1");
      requests.push_back(plain);
      requests.push_back(loop);
      twins.push_back({v, nullptr, nullptr});
    }
    const auto outcomes = c.compile_batch(requests);
    for (std::size_t i = 0; i < twins.size(); ++i) {
      INFO(to_label(f, twins[i].v) << ": " << outcomes[2 * i].error << outcomes[2 * i + 1].error);
      REQUIRE(outcomes[2 * i].program != nullptr);
      REQUIRE(outcomes[2 * i + 1].program != nullptr);
      // The option reached the kernel: the loop-only program is other code.
      differing_programs += outcomes[2 * i].program->cubin != outcomes[2 * i + 1].program->cubin;
      twins[i].one_tile = std::make_unique<loaded_module>(*outcomes[2 * i].program);
      twins[i].loop_only = std::make_unique<loaded_module>(*outcomes[2 * i + 1].program);
    }
    pairs += twins.size();

    for (const std::uint64_t n : sizes) {
      const auto host = generate_bytes(t, data_pattern::uniform, o, n, 0x0B175 + n);
      device_buffer input(host.size()); // cudaMalloc: aligned for every vector width
      input.upload(host.data(), host.size(), 0);
      for (const auto &tw : twins) {
        for (const auto &cfg : space.valid_launch_configs(tw.v)) {
          const point p{tw.v, cfg};
          if (space.determinism_of(p) != determinism::run_to_run || !space.flags(p).empty())
            continue;
          const launch_plan plan = space.plan_launch(tw.v, cfg);
          if (!plan.whole_array_abi || !one_tile_launch(f, tw.v, plan, n))
            continue;
          INFO(to_label(f, tw.v) << "." << to_label(f, cfg) << " " << to_string(t) << " n=" << n);
          const auto a = run(*tw.one_tile, plan, t, input.data(), n);
          const auto b = run(*tw.loop_only, plan, t, input.data(), n);
          REQUIRE(std::memcmp(a.data(), b.data(), a.size()) == 0);
          ++compared;
        }
      }
    }
  }
  std::printf("device %s: %zu variant pairs (%zu compiled to other code), %zu launches compared "
              "bit for bit, all equal\n",
              device.name.c_str(), pairs, differing_programs, compared);
  REQUIRE(differing_programs == pairs);
  REQUIRE(compared >= 100);
}
