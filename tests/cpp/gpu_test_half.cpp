// On the GPU (issue 26 item 1): every tunable preset reduces float16 and bfloat16 whole arrays
// within issue 26's bound, |result − exact| ≤ u_out·|exact| + d·2^-24·Σ|x|, d the depth of the
// point's summation (summation_depth below), on every data pattern and the half types' hostile
// ones (verify/half_patterns: values near the type's max, subnormals, ones, cancellation), for
// n in {1, 31, 1000, 2^20 + 7, 2^24}, odd n starting one element past an aligned address; and
// 2^24 ones in bfloat16 sum to exactly 2^24 (16-bit partials would stop at 256). CUB, the
// baseline, reduces the half types with a float32 accumulator and is verified the same way.
#include "catch.hpp"
#include "short_sampling.hpp"
#include "gpu_context.hpp"
#include "half_inputs.hpp"
#include "sequence_result.hpp"
#include "loaded_presets.hpp"

#include "reducetune/baseline/cub_baseline.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/half_patterns.hpp"
#include "reducetune/verify/verify.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <variant>
#include <vector>

using namespace reducetune;

namespace {

using bytes = std::vector<unsigned char>;
constexpr dtype half_types[] = {dtype::float16, dtype::bfloat16};
constexpr std::uint64_t sizes[] = {1, 31, 1000, (1u << 20) + 7, 1u << 24};

using rt_test::loaded_point;

// An upper bound on the depth of a tunable point's summation at n (the space does not state it
// yet): a thread's grid-stride loop folds at most ceil(n / (grid · block)) elements plus one
// partial tile (vec · unroll) and a scalar head and tail element, then the block tree
// (log2 block levels), then the final pass over the grid's partials (or the ticket's last
// block, the same loop).
std::uint64_t summation_depth(const search_space &s, const point &p, std::uint64_t n) {
  const launch_plan plan = s.plan_launch(p.compile, p.launch);
  const std::uint64_t grid = plan.grid_for(n), block = plan.block_size;
  const parameter_map values = compile_parameters(s.decl(), p);
  const auto vec = std::get<std::int64_t>(values.at("vec"));
  const auto unroll = std::get<std::int64_t>(values.at("unroll"));
  const std::uint64_t thread_and_block =
      stage_depth((n + grid - 1) / grid, block) + static_cast<std::uint64_t>(vec * unroll) + 2;
  return thread_and_block + (grid > 1 ? stage_depth(grid, block) : 0);
}

bytes run(const search_space &s, const loaded_point &lp, dtype t, const void *in, std::uint64_t n) {
  launch_sequence seq(*lp.module, s.plan_launch(lp.p.compile, lp.p.launch), t, in, n);
  return rt_test::run_for_result(seq, t);
}

} // namespace

TEST_CASE("Every tunable preset reduces float16 and bfloat16 within issue 26's bound",
          "[gpu][half]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "tunable");
  std::size_t runs = 0;
  for (const dtype t : half_types)
    for (const reduce_op o : all_ops) {
      const search_space s(f, t, o, g.limits);
      const auto points = rt_test::load_valid_presets(g, f, s);
      REQUIRE(points.size() == f.presets.size()); // none of them is atomic
      for (const std::uint64_t n : sizes)
        for (const auto &[pattern, host] :
             rt_test::half_inputs(t, o, n, all_data_patterns(), 0xC0FFEE)) {
          const unsigned offset = n % 2; // odd sizes start misaligned
          device_buffer input((n + offset) * size_of(t));
          input.upload(host.data(), host.size(), offset * size_of(t));
          const void *in = static_cast<const char *>(input.data()) + offset * size_of(t);
          const prepared_reference reference(t, o, host.data(), n);
          for (const auto &lp : points) {
            tolerance_options options;
            options.depth = summation_depth(s, lp.p, n);
            const bytes got = run(s, lp, t, in, n);
            const verdict v = reference.check(got.data(), options);
            INFO(to_string(t) << "." << to_string(o) << " " << pattern << " n = " << n << " "
                              << lp.label << " d = " << options.depth << ": expected " << v.expected
                              << " got " << v.got << " (" << v.reason << ")");
            REQUIRE(v.ok);
            ++runs;
          }
        }
    }
  std::printf("gpu_test_half: %zu runs within the bound\n", runs);
}

TEST_CASE("2^24 ones in bfloat16 sum to exactly 2^24 with every tunable preset", "[gpu][half]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "tunable");
  const search_space s(f, dtype::bfloat16, reduce_op::sum, g.limits);
  const std::uint64_t n = 1u << 24;
  const bytes host = generate_half_bytes(dtype::bfloat16, half_pattern::ones, n, 1);
  device_buffer input(host.size());
  input.upload(host.data(), host.size());
  for (const auto &lp : rt_test::load_valid_presets(g, f, s)) {
    const bytes got = run(s, lp, dtype::bfloat16, input.data(), n);
    bfloat16 value;
    std::memcpy(&value, got.data(), sizeof value);
    INFO(lp.label << " gave " << static_cast<float>(value));
    CHECK(value.bits == bfloat16(16777216.0).bits);
  }
}

TEST_CASE("CUB reduces float16 and bfloat16 with a float32 accumulator, verified",
          "[gpu][half][baseline]") {
  const device_info d = query_device();
  const evaluate_options quick = rt_test::short_sampling(10, 1.0); // 10 cold samples, no hot
  for (const dtype t : half_types)
    for (const reduce_op op : all_ops)
      for (const data_pattern p : all_data_patterns())
        for (const std::uint64_t n : {1ULL, 1000003ULL, 1ULL << 24}) {
          const workload w{t, op, n, p, 42, 1}; // offset 1: not 16-byte aligned
          const evaluation e = evaluate_cub(w, d, quick);
          INFO(to_string(t) << " " << to_string(op) << " " << to_string(p) << " n=" << n);
          if (const auto *f = std::get_if<failure>(&e)) FAIL(f->reason);
          CHECK(std::get<measurement>(e).check.ok);
        }
}
