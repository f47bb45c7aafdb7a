// On the GPU (issue 26): tile_ticket, a column tile whose split finishes in the pass (the
// tile's last block takes the finish's per-output code, kernel_templates/axis/axis_finish.cuh),
// gives the bits of the two-launch tile point with the same block, lanes, vec, unroll and split,
// over hostile columns of float32, bfloat16 and float64, sum, min and max: splits 2 to 1024, r
// not a multiple of anything (and below the split: empty chunks), several tiles a row, outer > 1,
// the input aligned and one element past it. Called twice in a row on one scratch, and captured
// in a CUDA graph replayed twice: the counters are zero again after every launch (a ticket
// needs no memset), and every call gives the same bits. Through the runtime (reducer), a ticket
// shape and a two-launch split shape take turns on one stream's scratch, and in a graph
// captured on it: the split's larger partials never land on the ticket's counters.
#include "axis_device_problem.hpp"
#include "axis_points.hpp"
#include "catch.hpp"
#include "gpu_context.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/runtime/reducer.hpp"
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

namespace {

// (outer, r, inner) of small integers as float32: every order of addition is exact, so each
// output is its host sum, to the bit.
struct exact_columns {
  reduction_shape shape;
  device_buffer in, out;
  std::vector<float> want;

  explicit exact_columns(const reduction_shape &s)
      : shape(s), in(s.outer * s.r * s.inner * sizeof(float)),
        out(s.outer * s.inner * sizeof(float)), want(s.outer * s.inner, 0.0f) {
    std::vector<float> host(s.outer * s.r * s.inner);
    for (std::size_t i = 0; i < host.size(); ++i)
      host[i] = static_cast<float>(static_cast<int>((i * 2654435761ull) % 5) - 2);
    for (std::uint64_t o = 0; o < s.outer; ++o)
      for (std::uint64_t k = 0; k < s.r; ++k)
        for (std::uint64_t j = 0; j < s.inner; ++j)
          want[o * s.inner + j] += host[(o * s.r + k) * s.inner + j];
    in.upload(host.data(), host.size() * sizeof(float));
  }

  void reduce(reducer &r, cudaStream_t st) const {
    r.reduce_axis(in.data(), shape, out.data(), st);
  }

  [[nodiscard]] bool right(cudaStream_t st) const {
    RT_CUDA_CALL(cudaStreamSynchronize(st));
    std::vector<float> got(want.size());
    out.download(got.data(), got.size() * sizeof(float));
    RT_CUDA_CALL(cudaMemsetAsync(out.data(), 0xa5, out.size(), st)); // no stale result passes
    return got == want;
  }
};

axis_entry entry_of(const search_space &s, const reduction_shape &shape, const std::string &name) {
  const auto p = s.base(name, {false, true});
  REQUIRE(p);
  return {shape, variant_label(s.decl(), *p), launch_label(s.decl(), *p)};
}

} // namespace

TEST_CASE("Through the runtime, a tile_ticket shape and a split shape share a stream's scratch, "
          "in turns and in a captured graph, and both stay exact",
          "[gpu][axis][tile][ticket][runtime]") {
  const rt_test::gpu_context g;
  const search_space s(family::load(g.lib, "axis"), dtype::float32, reduce_op::sum, g.limits);
  // The split point's partials (509 non-empty chunks x 130 columns of float32, 265 KB) reach
  // past where the ticket point's counters would begin were they placed after its own partials
  // from the scratch's start (501 chunks x 2 x 37 columns, 148 KB): the runtime keeps them apart.
  const exact_columns split({1, 65537, 130}), ticket({2, 1001, 37});
  reducer_options o;
  o.axis_table = {entry_of(s, split.shape, "tile_tall_columns"),
                  entry_of(s, ticket.shape, "tile_tall_columns_ticket")};
  reducer r = reducer::untuned(dtype::float32, reduce_op::sum, o);
  REQUIRE(r.choice_axis(split.shape).launches == 2);
  REQUIRE(r.choice_axis(ticket.shape).launches == 1);
  const stream st;
  for (int turn = 0; turn < 3; ++turn) {
    INFO("turn " << turn);
    ticket.reduce(r, st.get());
    CHECK(ticket.right(st.get()));
    split.reduce(r, st.get());
    CHECK(split.right(st.get()));
  }
  // A captured graph has a scratch of its own, allocated (and its counters zeroed) during the
  // capture, outside the captured stream.
  cudaGraph_t graph = nullptr;
  RT_CUDA_CALL(cudaStreamBeginCapture(st.get(), cudaStreamCaptureModeGlobal));
  split.reduce(r, st.get());
  ticket.reduce(r, st.get());
  split.reduce(r, st.get());
  RT_CUDA_CALL(cudaStreamEndCapture(st.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  RT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    INFO("graph replay " << replay);
    RT_CUDA_CALL(cudaGraphLaunch(exec, st.get()));
    CHECK(ticket.right(st.get()));
    CHECK(split.right(st.get()));
  }
  RT_CUDA_CALL(cudaGraphExecDestroy(exec));
  RT_CUDA_CALL(cudaGraphDestroy(graph));
  CHECK(r.fallbacks().empty());
}
