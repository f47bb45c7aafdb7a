// On the GPU (issue 26 X): a split's finish launched with programmatic dependent launch
// (measure/axis_launch.cpp: on cc >= 9.0 final_pass may start while its pass still runs, and
// waits in griddepcontrol.wait) gives the bits of the plain launch. The calls alternate two
// inputs on one stream and one scratch, back to back with nothing between them: a finish that
// read a partial before its own pass had written it would read the previous call's partials,
// those of the other input, and give the other input's outputs. Then the same four calls
// captured in a CUDA graph (a programmatic edge per call), replayed twice. Rows split across
// blocks and column tiles split along r, float32 and bfloat16, each pass long enough (2^24
// elements) that a finish started early has time to run ahead of it.
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

#include <array>
#include <memory>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

using bytes = std::vector<unsigned char>;

struct split_case {
  dtype type;
  const char *preset;
  reduction_shape shape;
};

// A split of rows (32 blocks a row), a column tile split 4 (the bfloat16 column shapes' kind),
// and a tall column tile split 512 (a handful of outputs, each with 512 partials).
const std::vector<split_case> cases = {
    {dtype::float32, "split_long_rows", {4, 1 << 22, 1}},
    {dtype::bfloat16, "tile_columns_vec4_split", {1, 32768, 512}},
    {dtype::float32, "tile_tall_columns", {1, 262144, 64}}};

// One input on the device and its host reference.
struct device_input {
  bytes host;
  device_buffer in;
  axis_reference reference;

  device_input(const problem &p, std::uint64_t seed)
      : host(generate_bytes(p.type, data_pattern::uniform, p.op, p.elements(), seed)),
        in(host.size()), reference(p, host.data()) {
    in.upload(host.data(), host.size());
  }
};

bytes download(const device_buffer &b) {
  bytes out(b.size());
  b.download(out.data(), out.size());
  return out;
}

// Calls k = 0..3 on one stream and scratch: input k % 2 into outs[k], launched as `plan` says.
void enqueue_alternating(const axis_kernels &k, const axis_plan &plan,
                         const std::array<std::unique_ptr<device_input>, 2> &inputs,
                         std::array<device_buffer, 4> &outs, device_buffer &partials,
                         cudaStream_t st) {
  for (std::size_t call = 0; call < outs.size(); ++call)
    launch_axis(k, plan, inputs[call % 2]->in.data(), outs[call].data(), partials.data(), st);
}

void clear(std::array<device_buffer, 4> &outs, cudaStream_t st) {
  for (auto &o : outs) RT_CUDA_CALL(cudaMemsetAsync(o.data(), 0xa5, o.size(), st));
}

} // namespace

TEST_CASE("A split finished with programmatic dependent launch gives the plain launch's bits on "
          "calls that alternate two inputs on one scratch, back to back and in a CUDA graph",
          "[gpu][axis][pdl]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  for (const auto &[t, preset, shape] : cases) {
    const problem p{t, reduce_op::sum, shape};
    INFO(preset << " " << to_label(p) << " on sm_" << g.limits.arch);
    const search_space s(f, t, reduce_op::sum, g.limits);
    auto points = rt_test::named_presets(s, {preset});
    rt_test::compile_and_load(g, f, points);
    const axis_plan plan = plan_axis(s, points[0].p, shape);
    REQUIRE(plan.finish_kernel());
    // the plan's decision is the device's: the attribute from sm_90 on, never below
    CHECK(plan.programmatic_finish == (g.limits.arch >= 90));
    axis_plan plain = plan; // the same kernels, the finish launched after the pass completes
    plain.programmatic_finish = false;
    const axis_kernels k = resolve_axis(*points[0].module, plan);

    const std::array<std::unique_ptr<device_input>, 2> inputs = {
        std::make_unique<device_input>(p, 0xD1), std::make_unique<device_input>(p, 0xD2)};
    device_buffer partials(plan.partials_bytes());
    const std::size_t out_bytes = p.outputs() * size_of(t);
    std::array<device_buffer, 4> outs = {device_buffer(out_bytes), device_buffer(out_bytes),
                                         device_buffer(out_bytes), device_buffer(out_bytes)};
    const stream st;

    // Each input's bits, its finish launched plainly and the stream drained in between.
    std::array<bytes, 2> want;
    for (std::size_t i = 0; i < 2; ++i) {
      launch_axis(k, plain, inputs[i]->in.data(), outs[i].data(), partials.data(), st.get());
      RT_CUDA_CALL(cudaStreamSynchronize(st.get()));
      want[i] = download(outs[i]);
      const axis_verdict v = inputs[i]->reference.check(want[i].data());
      INFO(v.summary());
      REQUIRE(v.ok());
    }
    REQUIRE(want[0] != want[1]); // a finish that read the other call's partials would show

    clear(outs, st.get());
    enqueue_alternating(k, plan, inputs, outs, partials, st.get());
    RT_CUDA_CALL(cudaStreamSynchronize(st.get()));
    for (std::size_t call = 0; call < outs.size(); ++call) {
      INFO("call " << call);
      CHECK(download(outs[call]) == want[call % 2]);
    }

    cudaGraph_t graph = nullptr;
    RT_CUDA_CALL(cudaStreamBeginCapture(st.get(), cudaStreamCaptureModeGlobal));
    enqueue_alternating(k, plan, inputs, outs, partials, st.get());
    RT_CUDA_CALL(cudaStreamEndCapture(st.get(), &graph));
    cudaGraphExec_t exec = nullptr;
    RT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
      clear(outs, st.get());
      RT_CUDA_CALL(cudaGraphLaunch(exec, st.get()));
      RT_CUDA_CALL(cudaStreamSynchronize(st.get()));
      for (std::size_t call = 0; call < outs.size(); ++call) {
        INFO("graph replay " << replay << ", call " << call);
        CHECK(download(outs[call]) == want[call % 2]);
      }
    }
    RT_CUDA_CALL(cudaGraphExecDestroy(exec));
    RT_CUDA_CALL(cudaGraphDestroy(graph));
  }
}
