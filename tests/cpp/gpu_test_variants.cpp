// On the GPU: every preset of every family and a seeded sample of tunable variants (over every
// type x operator, each with a launch config of its own) give the exact (integers, min, max)
// or within-bound (float sum, product) result for n in {1, 31, 1000, 2^20 + 7, 2^24}. Odd n
// start one element past an aligned address, so vector loads take their misaligned path.
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
#include "reducetune/verify/verify.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

using namespace reducetune;

namespace {

struct checked_point {
  const family *fam;
  std::string label;
  variant v;
  launch_config launch;
  bool flagged = false; // a value the family flags as racy (the seeds' unsafe last warp)
  std::shared_ptr<const compiled_program> program;
};

bool is_flagged(const family &f, const variant &v) {
  const auto compile = f.compile_parameters();
  for (std::size_t k = 0; k < compile.size(); ++k) {
    const parameter &p = f.parameters[compile[k]];
    if (const auto idx = p.index_of(v.values[k]); idx && !p.values[*idx].flag.empty())
      return true;
  }
  return false;
}

constexpr std::uint64_t sizes[] = {1, 31, 1000, (1u << 20) + 7, 1u << 24};
constexpr std::size_t tunable_per_pair = 16; // 16 x 16 type/op pairs = 256 tunable variants

} // namespace

TEST_CASE("Every preset and a sample of tunable variants reduce correctly on the GPU",
          "[gpu][variants]") {
  const rt_test::gpu_context gpu;
  const auto &[device, limits, lib] = gpu;
  const auto families = family::load_all(lib);

  // RT_CHECK_FAMILY=name checks one family only: a kernel that faults poisons the CUDA
  // context, so finding every faulting family takes one process per family.
  const char *only = std::getenv("RT_CHECK_FAMILY");
  std::vector<checked_point> points;
  for (const auto &f : families) {
    if (only && *only && f.name != only)
      continue;
    for (const dtype t : all_dtypes) {
      for (const reduce_op o : all_ops) {
        const search_space space(f, t, o, limits);
        for (const auto &p : space.presets())
          // The whole-array runner's points only: the axis family's kernels take a shape
          // (gpu_test_axis checks them with their own launcher).
          if (space.check(p.point, p.launch) &&
              space.plan_launch(p.point, p.launch).whole_array_abi)
            points.push_back({&f, to_label(f, p.point) + "@" + p.name, p.point, p.launch,
                              is_flagged(f, p.point), nullptr});
        if (f.name != "tunable")
          continue;
        std::size_t k = 0;
        for (const auto &v : space.sample(tunable_per_pair, 0x5eed + 97 * static_cast<int>(t) +
                                                                13 * static_cast<int>(o))) {
          const auto configs = space.valid_launch_configs(v);
          REQUIRE_FALSE(configs.empty());
          const launch_config &c = configs[(k++ * 7919) % configs.size()];
          points.push_back({&f, to_label(f, v) + "." + to_label(f, c), v, c, is_flagged(f, v),
                            nullptr});
        }
      }
    }
  }

  compiler c(lib);
  std::vector<compile_request> requests;
  for (const auto &p : points)
    requests.push_back(request_for(*p.fam, p.v, limits.arch));
  const auto outcomes = c.compile_batch(requests);
  for (std::size_t i = 0; i < points.size(); ++i) {
    INFO(points[i].label << ": " << outcomes[i].error);
    REQUIRE(outcomes[i].program != nullptr);
    points[i].program = outcomes[i].program;
  }

  std::map<const compiled_program *, std::unique_ptr<loaded_module>> modules;
  std::size_t runs = 0, wrong = 0, flagged_wrong = 0, tunable = 0;
  for (const auto &p : points)
    tunable += p.fam->name == "tunable" && p.label.find('@') == std::string::npos ? 1 : 0;

  for (const dtype t : all_dtypes) {
    for (const reduce_op o : all_ops) {
      for (const std::uint64_t n : sizes) {
        const unsigned offset = n % 2; // odd sizes start misaligned
        const auto host = generate_bytes(t, data_pattern::uniform, o, n, 0xC0FFEE + n);
        device_buffer input((n + offset) * size_of(t));
        input.upload(host.data(), host.size(), offset * size_of(t));
        const void *in = static_cast<const char *>(input.data()) + offset * size_of(t);
        // The host reference of 2^24 elements costs tens of ms: verify each distinct result
        // once per workload (most variants return the same bits).
        std::map<std::vector<unsigned char>, verdict> verdicts;
        const prepared_reference reference(t, o, host.data(), n);
        for (const auto &p : points) {
          if (p.v.type != t || p.v.op != o)
            continue;
          auto &module = modules[p.program.get()];
          if (!module)
            module = std::make_unique<loaded_module>(*p.program);
          INFO("variant " << p.label << " n=" << n << " offset=" << offset);
          const search_space space(*p.fam, t, o, limits);
          const launch_plan plan = space.plan_launch(p.v, p.launch);
          launch_sequence seq(*module, plan, t, in, n);
          const std::vector<unsigned char> got = rt_test::run_for_result(seq, t);
          auto known = verdicts.find(got);
          if (known == verdicts.end())
            known = verdicts.emplace(got, reference.check(got.data())).first;
          const verdict &v = known->second;
          ++runs;
          if (v.ok)
            continue;
          if (p.flagged) {
            ++flagged_wrong;
            WARN("flagged (racy) variant wrong: " << p.label << " n=" << n << ": " << v.reason);
          } else {
            ++wrong;
            UNSCOPED_INFO(p.label << " n=" << n << " offset=" << offset << ": expected "
                                  << v.expected << " got " << v.got << " (" << v.reason << ")");
          }
        }
      }
    }
  }
  std::printf("device %s (sm_%d, %d SMs): %zu points (%zu tunable samples), %zu runs, %zu wrong, "
              "%zu wrong among flagged racy variants\n",
              device.name.c_str(), device.arch(), device.sm_count, points.size(), tunable, runs,
              wrong, flagged_wrong);
  if (!only || std::string{only} == "tunable")
    REQUIRE(tunable >= 200);
  REQUIRE(wrong == 0);
}
