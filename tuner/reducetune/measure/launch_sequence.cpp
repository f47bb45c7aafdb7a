#include "reducetune/measure/launch_sequence.hpp"

#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/errors.hpp"

namespace reducetune {
namespace {

CUfunction kernel(const loaded_module &module, const launch_plan &plan, const char *role) {
  const auto it = plan.kernels.find(role);
  return it == plan.kernels.end() ? nullptr : module.function(it->second);
}

// The refusals of the header's constructors, before anything is planned or allocated.
void require_launchable(const launch_plan &plan, std::uint64_t n) {
  if (plan.block_size == 0) throw invalid_configuration("the launch plan has block size 0");
  if (!plan.whole_array_abi) // its entries take a shape: launched here they would fault
    throw invalid_configuration("the point's kernels take another kernel ABI than the whole "
                                "array's (a family of reductions along an axis): the whole-array "
                                "runner does not launch them");
  if (n == 0) throw invalid_configuration("a reduction needs n >= 1 elements");
}

// The steps and every scratch size are the planner's (space/reduction_plan.hpp), as the
// runtime's and the exports' launch counts are.
reduction_plan steps_of(const launch_plan &plan, dtype type, std::uint64_t n) {
  require_launchable(plan, n);
  return plan_reduction_steps(plan.proto, plan.grid_for, n, size_of(type), plan.in_place);
}

} // namespace

launch_sequence::launch_sequence(const loaded_module &module, const launch_plan &plan,
                                 dtype type, const void *in, std::uint64_t n)
    : launch_sequence(module, plan, steps_of(plan, type, n), type, in, n) {}

launch_sequence::launch_sequence(const loaded_module &module, const launch_plan &plan,
                                 const reduction_plan &steps, dtype type, const void *in,
                                 std::uint64_t n)
    : m_elem(size_of(type)), m_source(in), m_in(in), m_n(n), m_in_place(plan.in_place) {
  require_launchable(plan, n);
  const reduction_scratch &scratch = steps.scratch;
  if (m_in_place) {
    m_scratch_input = device_buffer(scratch.input_copy);
    m_in = m_scratch_input.data();
  }
  m_out = device_buffer(scratch.out);
  m_partials = device_buffer(scratch.partials);
  m_ticket = device_buffer(scratch.ticket);
  m_ticket.zero();
  const auto grid = static_cast<unsigned>(steps.first_grid);
  if (plan.proto == protocol::host)
    m_host = std::make_unique<host_finish>(type, plan.op, grid);
  if (scratch.ping != 0) {
    m_ping = device_buffer(scratch.ping);
    m_pong = device_buffer(scratch.pong);
  }
  bind_steps(module, plan, steps);
  if (plan.device_launches)
    reserve_pending_launches(grid);
  for (const reduction_step &st : m_steps)
    allow_dynamic_shared(st.kernel, plan.dynamic_shared_bytes);
}

void launch_sequence::bind_steps(const loaded_module &module, const launch_plan &plan,
                                 const reduction_plan &steps) {
  const reduction_kernels k{kernel(module, plan, "pass"), kernel(module, plan, "final"),
                            kernel(module, plan, "init")};
  m_steps = bind_reduction(steps, k, plan.block_size, plan.dynamic_shared_bytes, m_in,
                           {m_out.data(), m_partials.data(), m_ping.data(), m_pong.data()});
  m_result = plan.proto == protocol::host ? m_host->result() : m_out.data();
  m_launches = steps.launches();
}

void launch_sequence::poison(cudaStream_t s, unsigned char byte) {
  if (m_host) {
    m_host->poison(byte);
    return;
  }
  m_out.fill(byte, s);
}

void launch_sequence::enqueue(cudaStream_t s) {
  // Restoring an in-place kernel's input is part of the sequence (a copy of n elements): the
  // time of such seed variants includes it, as their course did with a fresh input.
  if (m_in_place)
    RT_CUDA_CALL(cudaMemcpyAsync(m_scratch_input.data(), m_source, m_n * m_elem,
                                 cudaMemcpyDeviceToDevice, s));
  for (const reduction_step &st : m_steps)
    launch_reduction_kernel(st.kernel, st.grid, st.block, st.shared, s, st.in, st.out, st.n,
                            st.partials, m_ticket.data());
  if (m_host) m_host->enqueue(s, m_partials.data());
}

} // namespace reducetune
