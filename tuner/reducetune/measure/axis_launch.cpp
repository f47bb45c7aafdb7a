#include "reducetune/measure/axis_launch.hpp"

#include "reducetune/cuda/driver_api.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/errors.hpp"

#include <algorithm>
#include <limits>

namespace reducetune {

namespace {

constexpr std::uint64_t max_grid = 2147483647; // the x-dimension limit since sm_30

// The finish's block: 4 warps, a warp per output (axis_finish.cuh, finish_outputs), whatever the pass's
// block. The finish serves splits, whose outputs are few: 64 outputs at the split presets'
// block of 512 took 4 blocks, so 4 SMs held every warp and their loads (Nsight Compute, H200:
// 6-9 us at 4-32 blocks); at 4 warps a block they spread over 16 SMs. With many outputs
// 16 such blocks still fill an SM's 64 warps (32 resident blocks on sm_80-sm_90). The order
// of a combine is per warp, so the block size changes no bits; the kernel reads its block
// from blockDim, and this constant is the one place that decides it.
constexpr unsigned final_block_size = 128;

std::uint64_t checked(std::int64_t blocks, const std::string &what) {
  if (blocks < 1 || static_cast<std::uint64_t>(blocks) > max_grid)
    throw invalid_configuration(what + " gives " + std::to_string(blocks) +
                                " blocks (must be in [1, 2^31 - 1])");
  return static_cast<std::uint64_t>(blocks);
}

// Both kernels go through cuLaunchKernelEx, the one driver call that takes launch attributes
// (the finish's programmatic serialization); with none it is cuLaunchKernel.
void launch(CUfunction kernel, std::uint64_t grid, unsigned block, cudaStream_t stream,
            const void *in, void *out, const reduction_shape &s, void *partials,
            launch_attributes attributes = {}) {
  unsigned long long outer = s.outer, r = s.r, inner = s.inner;
  void *args[] = {&in, &out, &outer, &r, &inner, &partials};
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(grid);
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = block;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = reinterpret_cast<CUstream>(stream);
  config.attrs = attributes.count > 0 ? attributes.values : nullptr;
  config.numAttrs = attributes.count;
  RT_DRIVER_CALL(driver_api::get().cuLaunchKernelEx(&config, kernel, args, nullptr));
}

// A name of the point's scope (a parameter, or a let evaluated there), or `fallback`.
std::int64_t int_or(const scope &s, const std::string &name, std::int64_t fallback) {
  if (!s.contains(name)) return fallback;
  const std::int64_t v = expression::parse(name).eval_int(s);
  if (v < 0)
    throw invalid_configuration("'" + name + "' is " + std::to_string(v) + " for this point");
  return v;
}

// Chunks of ceil(r / split) elements, of which ceil(r / chunk) are not empty: the kernels'
// split_row (axis_acc.cuh), whose partials are laid out parts per output. r = 0 has none.
std::uint64_t parts_of_split(std::uint64_t r, std::uint64_t split) {
  if (r == 0) return 0;
  const std::uint64_t chunk = (r + split - 1) / split;
  return (r + chunk - 1) / chunk;
}

} // namespace

std::uint64_t axis_plan::counters_offset() const noexcept {
  const std::uint64_t accumulators = split > 1 ? parts * shape.outer * shape.inner : 0;
  return (accumulators * accumulator_bytes + 15) / 16 * 16;
}

std::uint64_t axis_plan::counters_bytes() const noexcept { return counters * sizeof(unsigned); }

std::uint64_t axis_plan::partials_bytes() const noexcept {
  if (split <= 1) return 0;
  if (counters == 0) return parts * shape.outer * shape.inner * accumulator_bytes;
  return counters_offset() + counters_bytes();
}

axis_plan plan_axis(const search_space &space, const point &p, const reduction_shape &shape) {
  validate(problem{space.type(), space.op(), shape});
  if (const auto verdict = space.check(p); !verdict)
    throw invalid_configuration("cannot plan " + to_label(space.decl(), p.compile) + ": " +
                                verdict.reasons());
  scope s = space.scope_for(p.compile, p.launch);
  if (space.decl().abi != "axis")
    throw invalid_configuration("family '" + space.decl().name +
                                "' does not declare the axis kernel ABI (\"abi\": \"axis\")");
  const auto elements = shape.outer * shape.r * shape.inner;
  if (elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw invalid_configuration("the shape has too many elements for a grid expression");
  s.set("outer", static_cast<std::int64_t>(shape.outer));
  s.set("r", static_cast<std::int64_t>(shape.r));
  s.set("inner", static_cast<std::int64_t>(shape.inner));
  s.set("n", static_cast<std::int64_t>(elements));

  const launch_plan whole = space.plan_launch(p.compile, p.launch);
  axis_plan plan;
  plan.shape = shape;
  plan.block_size = whole.block_size;
  plan.grid = checked(space.decl().grid.eval_int(s), "grid '" + space.decl().grid.text() + "'");
  plan.split = static_cast<std::uint64_t>(int_or(s, "split", 1));
  if (plan.split > 1) plan.parts = parts_of_split(shape.r, plan.split);
  // The family's accumulator (rt_types.cuh): float32 for the half types, T otherwise.
  plan.accumulator_bytes = size_of(accumulator_of(space.type()));
  plan.batch_invariant = int_or(s, "batch_invariant", 0) != 0;
  plan.pass = whole.kernels.at("pass");
  // tile_ticket (family.json): one counter per tile of `ticket_columns` columns, per outer
  if (const std::int64_t columns = int_or(s, "ticket_columns", 0); columns > 0 && plan.split > 1)
    plan.counters = shape.outer * ((shape.inner + columns - 1) / columns);
  if (plan.finish_kernel()) {
    plan.final = whole.kernels.at("final");
    // A warp per output, or for a split of fewer than 32 blocks `split` lanes per output, 32 /
    // split outputs a warp (axis_finish.cuh, finish_lanes: the same bits, fewer idle lanes). The
    // kernel is grid-stride, so this is a choice of speed, not of correctness.
    plan.final_block_size = final_block_size;
    const std::uint64_t lanes = std::min<std::uint64_t>(plan.split, 32);
    const std::uint64_t per_block = final_block_size / 32 * (32 / lanes);
    plan.final_grid = std::min(max_grid, (shape.outer * shape.inner + per_block - 1) / per_block);
    // The space's limits are the device's (limits_of) wherever a plan is launched, and the
    // program is compiled for that arch, so its finish holds griddepcontrol.wait exactly here.
    plan.programmatic_finish = finish_programmatically(space.limits().arch);
  }
  return plan;
}

axis_kernels resolve_axis(const loaded_module &module, const axis_plan &plan) {
  axis_kernels k;
  k.pass = module.function(plan.pass);
  if (plan.finish_kernel())
    k.final = module.function(plan.final);
  return k;
}

launch_attributes finish_attributes(const axis_plan &plan) noexcept {
  launch_attributes a;
  if (plan.finish_kernel() && plan.programmatic_finish) {
    // The pass triggers its dependents at each block's start (axis.cuh), so the finish's grid
    // is launched once the pass's last blocks run; a stream capture records the pair as a
    // programmatic edge (CUDA >= 12.3), the same overlap in a graph.
    a.values[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.values[0].value.programmaticStreamSerializationAllowed = 1;
    a.count = 1;
  }
  return a;
}

void launch_axis(const axis_kernels &kernels, const axis_plan &plan, const void *in, void *out,
                 void *partials, cudaStream_t stream) {
  if (plan.partials_bytes() > 0 && partials == nullptr)
    throw invalid_configuration("the point splits r into " + std::to_string(plan.split) +
                                " blocks per output and needs partials");
  if (kernels.pass == nullptr || (plan.finish_kernel() && kernels.final == nullptr))
    throw invalid_configuration("the axis plan's kernels were not resolved (resolve_axis)");
  launch(kernels.pass, plan.grid, plan.block_size, stream, in, out, plan.shape, partials);
  if (plan.finish_kernel())
    launch(kernels.final, plan.final_grid, plan.final_block_size, stream, in, out, plan.shape,
           partials, finish_attributes(plan));
}

void zero_counters(const axis_plan &plan, void *scratch) {
  if (plan.counters > 0)
    zero_device_bytes(static_cast<char *>(scratch) + plan.counters_offset(), plan.counters_bytes());
}

void launch_axis(const loaded_module &module, const axis_plan &plan, const void *in, void *out,
                 void *partials, cudaStream_t stream) {
  launch_axis(resolve_axis(module, plan), plan, in, out, partials, stream);
}

} // namespace reducetune
