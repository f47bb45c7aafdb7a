#include "reducetune/measure/launch_sequence.hpp"

#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/errors.hpp"

#include <limits>

namespace reducetune {
namespace {

unsigned checked_grid(const launch_plan &plan, std::uint64_t n) {
  if (!plan.grid_for) throw invalid_configuration("the launch plan has no grid expression");
  const std::uint64_t g = plan.grid_for(n);
  if (g == 0 || g > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw invalid_configuration("grid of " + std::to_string(g) + " blocks for n = " +
                                std::to_string(n) + " is outside 1 .. 2^31 - 1");
  return static_cast<unsigned>(g);
}

CUfunction kernel(const loaded_module &module, const launch_plan &plan, const char *role) {
  const auto it = plan.kernels.find(role);
  if (it == plan.kernels.end())
    throw invalid_configuration(std::string{"the launch plan has no '"} + role + "' kernel");
  return module.function(it->second);
}

} // namespace

launch_sequence::launch_sequence(const loaded_module &module, const launch_plan &plan,
                                 dtype type, const void *in, std::uint64_t n)
    : m_elem(size_of(type)), m_source(in), m_in(in), m_n(n), m_in_place(plan.in_place) {
  if (plan.block_size == 0) throw invalid_configuration("the launch plan has block size 0");
  if (n == 0) throw invalid_configuration("a reduction needs n >= 1 elements");
  const unsigned grid = checked_grid(plan, n);
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
  for (const step &st : m_steps)
    allow_dynamic_shared(st.kernel, plan.dynamic_shared_bytes);
}

void launch_sequence::plan_steps(const loaded_module &module, const launch_plan &plan) {
  const unsigned bs = plan.block_size, shared = plan.dynamic_shared_bytes;
  const unsigned grid = checked_grid(plan, m_n);
  switch (plan.proto) {
  case protocol::multipass: {
    const CUfunction pass = kernel(module, plan, "pass");
    const void *in = m_in;
    std::uint64_t n = m_n;
    void *buffers[2] = {m_ping.data(), m_pong.data()};
    for (int i = 0;; i ^= 1) {
      const unsigned g = checked_grid(plan, n);
      if (n > 1 && g >= n)
        throw invalid_configuration("multipass grid does not shrink: " + std::to_string(g) +
                                    " blocks for n = " + std::to_string(n));
      m_steps.push_back({pass, g, bs, shared, in, buffers[i], n});
      in = buffers[i];
      n = g;
      if (n == 1) break;
    }
    m_result = in;
    break;
  }
  case protocol::two_pass:
    m_steps.push_back({kernel(module, plan, "pass"), grid, bs, shared, m_in, m_out.data(), m_n});
    if (grid == 1) { // the one block's partial is the result: a second launch only copies it
      m_result = m_partials.data();
      break;
    }
    m_steps.push_back({kernel(module, plan, "final"), 1, bs, shared, m_partials.data(),
                       m_out.data(), grid});
    m_result = m_out.data();
    break;
  case protocol::atomic:
    m_steps.push_back({kernel(module, plan, "init"), 1, 1, 0, m_in, m_out.data(), m_n});
    m_steps.push_back({kernel(module, plan, "pass"), grid, bs, shared, m_in, m_out.data(), m_n});
    m_result = m_out.data();
    break;
  case protocol::ticket:
    m_steps.push_back({kernel(module, plan, "pass"), grid, bs, shared, m_in, m_out.data(), m_n});
    m_result = m_out.data();
    break;
  case protocol::host: // the pass writes partials[blockIdx.x]; enqueue() adds the host finish
    m_steps.push_back({kernel(module, plan, "pass"), grid, bs, shared, m_in, m_out.data(), m_n});
    m_result = m_host->result();
    break;
  }
  m_launches = static_cast<unsigned>(m_steps.size());
}

void launch_sequence::enqueue(cudaStream_t s) {
  // Restoring an in-place kernel's input is part of the sequence (a copy of n elements): the
  // time of such seed variants includes it, as their course did with a fresh input.
  if (m_in_place)
    RT_CUDA_CALL(cudaMemcpyAsync(m_scratch_input.data(), m_source, m_n * m_elem,
                                 cudaMemcpyDeviceToDevice, s));
  for (const step &st : m_steps)
    launch_reduction_kernel(st.kernel, st.grid, st.block, st.shared, s, st.in, st.out, st.n,
                            m_partials.data(), m_ticket.data());
  if (m_host) m_host->enqueue(s, m_partials.data());
}

} // namespace reducetune
