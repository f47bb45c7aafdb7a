// On the GPU: the host protocol (the cascade family's host finish) through evaluate(), the
// runner every measurement uses: the pass kernel, the copy of the partials into page-locked
// memory and the CPU's combine, captured as one graph per input copy and sampled. Its result
// is verified like every protocol's: right for every type x operator (n = 1, one block, and
// n = 2^20 + 7 from a misaligned start), and a wrong combine is a wrong_result failure.
#include "catch.hpp"
#include "gpu_context.hpp"
#include "short_sampling.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/space/space.hpp"

#include <cstdio>

using namespace reducetune;

namespace {

evaluate_options quick(bool graph) {
  evaluate_options o = rt_test::short_sampling(10, 0.05);
  o.graph = graph;
  return o;
}

struct host_point {
  search_space space;
  point p;
  std::shared_ptr<const compiled_program> program;
};

host_point compiled(compiler &c, const family &f, dtype t, reduce_op o,
                    const device_limits &limits) {
  search_space s(f, t, o, limits);
  const point p = s.point_of({{"finish", std::string("host")}, {"vec", 2}, {"grid_cap", 4}});
  auto program = c.compile(request_for(f, p.compile, limits.arch));
  return {std::move(s), p, std::move(program)};
}

} // namespace

TEST_CASE("the host protocol's result is verified right for every type and operator",
          "[gpu][host]") {
  const rt_test::gpu_context gpu;
  const auto &[device, limits, lib] = gpu;
  const family f = family::load(lib, "cascade");
  compiler c(lib);
  for (const dtype t : all_dtypes)
    for (const reduce_op o : all_ops) {
      if (is_half(t)) continue; // the cascade family refuses the half types (16-bit partials)
      const host_point hp = compiled(c, f, t, o, limits);
      const launch_plan plan = hp.space.plan_launch(hp.p.compile, hp.p.launch);
      REQUIRE(plan.proto == protocol::host);
      for (const std::uint64_t n : {std::uint64_t{1}, (std::uint64_t{1} << 20) + 7})
        for (const bool graph : {true, false}) {
          workload w;
          w.type = t;
          w.op = o;
          w.n = n;
          w.offset_elements = static_cast<unsigned>(n % 2);
          const evaluation e = evaluate(*hp.program, plan, w, device, quick(graph));
          const auto *m = std::get_if<measurement>(&e);
          INFO(to_string(t) << " " << to_string(o) << " n=" << n << " graph=" << graph << ": "
                            << (m ? m->check.reason : std::get<failure>(e).reason));
          REQUIRE(m != nullptr);
          CHECK(m->check.ok);
          CHECK(m->launches == 1);
          CHECK(m->cold.samples_s.size() >= 10);
        }
    }
}

TEST_CASE("a host finish that combines with the wrong operator is a wrong result", "[gpu][host]") {
  const rt_test::gpu_context gpu;
  const auto &[device, limits, lib] = gpu;
  compiler c(lib);
  const host_point hp = compiled(c, family::load(lib, "cascade"), dtype::int32, reduce_op::sum,
                                 limits);
  launch_plan plan = hp.space.plan_launch(hp.p.compile, hp.p.launch);
  plan.op = reduce_op::max; // the kernel's partials are sums; the CPU takes their maximum
  workload w;
  w.type = dtype::int32;
  w.op = reduce_op::sum;
  w.n = 1 << 22; // 4 x 132 blocks at most on an H100 or H200: many partials
  const evaluation e = evaluate(*hp.program, plan, w, device, quick(true));
  const auto *f = std::get_if<failure>(&e);
  REQUIRE(f != nullptr);
  CHECK(f->kind == failure_kind::wrong_result);
  std::printf("host finish with the wrong operator on %s: %s\n", device.name.c_str(),
              f->reason.c_str());
}
