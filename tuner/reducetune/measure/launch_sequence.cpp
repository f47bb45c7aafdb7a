#include "reducetune/measure/launch_sequence.hpp"

#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/errors.hpp"

#include <limits>

namespace reducetune {
namespace {

CUfunction kernel(const loaded_module &module, const launch_plan &plan, const char *role) {
  const auto it = plan.kernels.find(role);
  return it == plan.kernels.end() ? nullptr : module.function(it->second);
}

std::uint64_t grid_at(const launch_plan &plan, std::uint64_t n) {
  if (!plan.grid_for) throw invalid_configuration("the launch plan has no grid expression");
  return plan.grid_for(n);
}

} // namespace

launch_sequence::launch_sequence(const loaded_module &module, const launch_plan &plan,
                                 dtype type, const void *in, std::uint64_t n)
    : m_elem(size_of(type)), m_source(in), m_in(in), m_n(n), m_in_place(plan.in_place) {
  if (plan.block_size == 0) throw invalid_configuration("the launch plan has block size 0");
  if (n == 0) throw invalid_configuration("a reduction needs n >= 1 elements");
  const unsigned grid = checked_grid(grid_at(plan, n), n);
  if (m_in_place) {
    m_scratch_input = device_buffer(n * m_elem);
    m_in = m_scratch_input.data();
  }
  m_out = device_buffer(m_elem);
  m_partials = device_buffer(std::uint64_t{grid} * m_elem);
  m_ticket = device_buffer(sizeof(unsigned));
  m_ticket.zero();
  if (plan.proto == protocol::host)
    m_host = std::make_unique<host_finish>(type, plan.op, grid);
  if (plan.proto == protocol::multipass) {
    m_ping = device_buffer(std::uint64_t{grid} * m_elem);
    m_pong = device_buffer(std::uint64_t{grid} * m_elem);
  }
  plan_steps(module, plan);
  if (plan.device_launches)
    reserve_pending_launches(grid);
  for (const reduction_step &st : m_steps)
    allow_dynamic_shared(st.kernel, plan.dynamic_shared_bytes);
}

void launch_sequence::plan_steps(const loaded_module &module, const launch_plan &plan) {
  const reduction_kernels k{kernel(module, plan, "pass"), kernel(module, plan, "final"),
                            kernel(module, plan, "init")};
  m_steps = plan_reduction(plan.proto, k, [&](std::uint64_t n) { return grid_at(plan, n); },
                           plan.block_size, plan.dynamic_shared_bytes, m_in, m_n,
                           {m_out.data(), m_partials.data(), m_ping.data(), m_pong.data()});
  m_result = plan.proto == protocol::host ? m_host->result() : m_out.data();
  m_launches = static_cast<unsigned>(m_steps.size());
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
