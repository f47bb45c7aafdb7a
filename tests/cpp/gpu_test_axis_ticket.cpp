// On the GPU (issue 26): tile_ticket, a column tile whose split finishes in the pass (the
// tile's last block takes the finish's per-output code, kernel_templates/axis/axis_finish.cuh),
// gives the bits of the two-launch tile point with the same block, lanes, vec, unroll and split,
// over hostile columns of float32, bfloat16 and float64, sum, min and max: splits 2 to 1024, r
// not a multiple of anything (and below the split: empty chunks), several tiles a row, outer > 1,
// the input aligned and one element past it. Called twice in a row on one scratch, and captured
// in a CUDA graph replayed twice: the counters are zero again after every launch (a ticket
// needs no memset), and every call gives the same bits.
#include "axis_device_problem.hpp"
#include "axis_points.hpp"
#include "catch.hpp"
#include "gpu_context.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/axis_reference.hpp"
#include "reducetune/verify/patterns.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

using namespace reducetune;

namespace {

using bytes = std::vector<unsigned char>;
using rt_test::named_point;

struct tile_geometry {
  std::int64_t block_size, lanes, vec, unroll, split; // vec 0: 16-byte loads of the type
};

// (block, lanes, vec, unroll, split): splits 2 to 1024, below 32 (split lanes per output in the
// finish) and above (a warp, batches of loads), tiles of 4 to 1024 columns.
const std::vector<tile_geometry> geometries = {
    {256, 32, 2, 4, 2},  {128, 32, 1, 2, 4},  {256, 8, 2, 4, 16},    {512, 128, 0, 4, 32},
    {256, 32, 0, 4, 64}, {256, 2, 2, 4, 512}, {256, 256, 0, 4, 1024}};

// Each geometry as tile, then as tile_ticket: points[2 * i] and points[2 * i + 1].
std::vector<named_point> twins(const rt_test::gpu_context &g, const family &f,
                               const search_space &s) {
  std::vector<named_point> out;
  for (const auto &[bs, lanes, vec, unroll, split] : geometries)
    for (const char *strategy : {"tile", "tile_ticket"}) {
      const std::int64_t v = vec ? vec : 16 / static_cast<std::int64_t>(size_of(s.type()));
      const point p = s.point_of({{"strategy", std::string(strategy)},
                                  {"block_size", bs},
                                  {"lanes", lanes},
                                  {"vec", v},
                                  {"unroll", unroll},
                                  {"split", split}});
      INFO(to_label(f, p.compile));
      REQUIRE(s.check(p).reasons() == "");
      out.push_back({to_label(f, p.compile), p, nullptr});
    }
  rt_test::compile_and_load(g, f, out);
  return out;
}

// Columns: r prime or odd (never a multiple of a chunk), r below the split (empty chunks),
// partial tiles (inner not a multiple of any width), outer > 1.
const std::vector<reduction_shape> shapes = {{3, 1001, 200}, {2, 4099, 37},  {1, 65537, 130},
                                             {5, 3, 70},     {1, 16387, 64}, {4, 257, 1030}};

const std::vector<data_pattern> hostile = {data_pattern::alternating, data_pattern::wide_range};

bytes download(const device_buffer &b, std::size_t size, std::size_t offset = 0) {
  bytes out(size);
  b.download(out.data(), size, offset);
  return out;
}

// The ticket point's scratch after its launches: every counter back to zero.
void require_counters_zero(const axis_plan &plan, const device_buffer &partials) {
  const bytes counters = download(partials, plan.counters_bytes(), plan.counters_offset());
  REQUIRE(plan.counters > 0);
  CHECK(counters == bytes(counters.size(), 0));
}

// The ticket point's outputs: two calls in a row on one scratch, then a graph of one call
// replayed twice; each result must be `want`, bit for bit.
void check_ticket(const search_space &s, const named_point &ticket,
                  const rt_test::axis_device_problem &d, const bytes &want) {
  const axis_plan plan = plan_axis(s, ticket.p, d.p.shape);
  REQUIRE(plan.launches() == 1);
  const axis_kernels k = resolve_axis(*ticket.module, plan);
  device_buffer partials(plan.partials_bytes());
  zero_counters(plan, partials.data());
  const stream st;
  const auto result = [&] {
    RT_CUDA_CALL(cudaStreamSynchronize(st.get()));
    return download(d.out, d.out.size());
  };
  for (int call = 0; call < 2; ++call) {
    INFO("call " << call);
    RT_CUDA_CALL(cudaMemsetAsync(d.out.data(), 0xa5, d.out.size(), st.get()));
    launch_axis(k, plan, d.input(), d.out.data(), partials.data(), st.get());
    CHECK(result() == want);
    require_counters_zero(plan, partials);
  }
  cudaGraph_t graph = nullptr;
  RT_CUDA_CALL(cudaStreamBeginCapture(st.get(), cudaStreamCaptureModeGlobal));
  launch_axis(k, plan, d.input(), d.out.data(), partials.data(), st.get());
  RT_CUDA_CALL(cudaStreamEndCapture(st.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  RT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    INFO("graph replay " << replay);
    RT_CUDA_CALL(cudaMemsetAsync(d.out.data(), 0xa5, d.out.size(), st.get()));
    RT_CUDA_CALL(cudaGraphLaunch(exec, st.get()));
    CHECK(result() == want);
    require_counters_zero(plan, partials);
  }
  RT_CUDA_CALL(cudaGraphExecDestroy(exec));
  RT_CUDA_CALL(cudaGraphDestroy(graph));
}

} // namespace

TEST_CASE("tile_ticket gives the two-launch tile point's bits for every split, called twice and "
          "replayed twice in a CUDA graph, its counters zero after every launch",
          "[gpu][axis][tile][ticket]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  std::size_t compared = 0;
  for (const dtype t : {dtype::float32, dtype::bfloat16, dtype::float64})
    for (const reduce_op o : {reduce_op::sum, reduce_op::min, reduce_op::max}) {
      const search_space s(f, t, o, g.limits);
      const auto points = twins(g, f, s);
      for (const reduction_shape &shape : shapes)
        for (const std::size_t offset : {0, 1}) {
          const problem p{t, o, shape};
          for (const data_pattern pattern : hostile) {
            const bytes host = generate_bytes(t, pattern, o, p.elements() + offset,
                                              0x71C + shape.r + shape.inner + offset);
            const rt_test::axis_device_problem d(p, host, offset);
            const axis_reference reference(p, host.data() + offset * size_of(t));
            for (std::size_t i = 0; i < points.size(); i += 2) {
              INFO(to_label(p) << " offset " << offset << " " << to_string(pattern) << " "
                               << points[i + 1].name);
              const bytes want = d.run(s, points[i]); // tile: the pass, then final_pass
              const axis_verdict v = reference.check(want.data());
              INFO(v.summary());
              REQUIRE(v.ok());
              check_ticket(s, points[i + 1], d, want);
              ++compared;
            }
          }
        }
    }
  CHECK(compared == 3 * 3 * shapes.size() * 2 * hostile.size() * geometries.size());
}
