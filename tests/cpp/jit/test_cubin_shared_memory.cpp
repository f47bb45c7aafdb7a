// The shared memory the space computes for a point (the family's `shared_bytes`, static plus
// dynamic, which check() holds against the device's limit) is what the compiled kernels use:
// for every preset of every family, and a seeded sample of other points, compiled with NVRTC
// for sm_90 and sm_80, the largest static shared size of its kernels, read from the cubin's
// ELF `.nv.shared.<lowered name>` sections, equals shared_bytes - dynamic_shared_bytes. No GPU:
// the cubin is only read. For the sampled points the figure may be larger than the cubin's,
// never smaller: ptxas drops a shared array a one-warp block never touches (tunable and cascade
// at block_size 32 with per-warp partials declare 32 slots and use none), and an overestimate
// only makes check() stricter, while an underestimate would let a point pass the device's limit
// and fail at launch.
#include "catch.hpp"
#include "cubin_elf.hpp"
#include "shared_compiler.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace reducetune;

namespace {

// sm_90 cubins begin the shared window of every kernel that uses shared memory with 1 KiB the
// system reserves (the `.nv.reservedSmem` symbols, marked by a `.nv.shared.reserved.0`
// section); sm_80 cubins have neither. The family declares only what its kernels declare.
constexpr std::uint64_t reserved_window = 1024;

// The largest static shared memory of the point's kernels (init, pass, final): a block of
// each runs with the point's block size, so the family's figure must cover the largest. A
// batch shares one program among several points: only this request's kernels count.
std::uint64_t static_shared_bytes(const compiled_program &program, const compile_request &request) {
  const auto sections = rt_test::elf_sections(program.cubin);
  const std::uint64_t reserved = sections.count(".nv.shared.reserved.0") ? reserved_window : 0;
  std::uint64_t most = 0;
  for (const auto &expression : request.name_expressions) {
    const auto it = sections.find(".nv.shared." + program.mangled(expression));
    if (it == sections.end()) continue;
    REQUIRE(it->second.size >= reserved); // the reserved window is there, or this reading is wrong
    most = std::max(most, it->second.size - reserved);
  }
  return most;
}

} // namespace

TEST_CASE("every preset's shared_bytes is its kernels' static shared memory in the cubin, "
          "plus its dynamic shared memory",
          "[jit][space][slow]") {
  const template_library lib = template_library::embedded();
  compiler &jit = rt_test::shared_compiler();
  std::size_t presets_checked = 0;
  for (const int arch : {90, 80})
    // One type per element size (2, 4 and 8 bytes): shared_bytes scales with sizeof_T (the
    // axis family's staged tile holds elements of T, padded by the element size).
    for (const dtype t : {dtype::bfloat16, dtype::int32, dtype::float64})
      for (const auto &f : family::load_all(lib)) {
        const search_space s(f, t, reduce_op::sum, device_limits::for_arch(arch_name(arch)));
        struct checked_point {
          std::string name;
          point p;
          bool exact; // presets: equal; sampled points: the figure covers the cubin's
        };
        std::vector<checked_point> points;
        for (const auto &p : s.presets())
          if (s.check(p.point, p.launch)) // a preset meant for other types is not built
            points.push_back({"preset " + p.name, point{p.point, p.launch}, true});
        presets_checked += points.size();
        // Values no preset takes (the volatile warp strategies' padded slots, for instance).
        for (const auto &v : s.sample(12, 7))
          points.push_back(
              {"sampled " + to_label(f, v), point{v, s.valid_launch_configs(v).at(0)}, false});
        // A thread per output with vector loads along inner (a one-row column tile: no tree,
        // so no shared memory once compiled): every valid width, exactly.
        if (f.name == "axis")
          for (const std::int64_t vec : {2, 4, 8}) {
            const point p = s.point_of({{"strategy", std::string("thread")},
                                        {"block_size", std::int64_t{256}},
                                        {"lanes", std::int64_t{1}},
                                        {"vec", vec},
                                        {"unroll", std::int64_t{4}},
                                        {"split", std::int64_t{1}}});
            if (s.check(p).ok()) points.push_back({"thread vec " + std::to_string(vec), p, true});
          }
        std::vector<compile_request> requests;
        for (const auto &c : points) requests.push_back(request_for(f, c.p.compile, arch));
        const auto outcomes = jit.compile_batch(requests);
        for (std::size_t i = 0; i < points.size(); ++i) {
          const auto &[name, p, exact] = points[i];
          INFO(f.name << " " << name << " for " << to_string(t) << " on sm_" << arch);
          REQUIRE(outcomes[i].program != nullptr);
          const auto declared =
              static_cast<std::uint64_t>(f.shared_bytes.eval_int(s.scope_for(p.compile, p.launch)));
          const auto plan = s.plan_launch(p.compile, p.launch);
          const std::uint64_t compiled =
              static_shared_bytes(*outcomes[i].program, requests[i]) + plan.dynamic_shared_bytes;
          if (exact)
            CHECK(compiled == declared);
          else
            CHECK(compiled <= declared);
        }
      }
  CHECK(presets_checked >= 60); // the families' presets on two architectures, not an empty loop
}
