#include "reducetune/cuda/reduction_steps.hpp"

#include "reducetune/errors.hpp"

#include <string>

namespace reducetune {
namespace {

CUfunction kernel_for(const reduction_kernels &k, kernel_role role) {
  const CUfunction f = role == kernel_role::init    ? k.init
                       : role == kernel_role::final ? k.final
                                                    : k.pass;
  if (f == nullptr)
    throw invalid_configuration(std::string{"the launch plan has no '"} + to_string(role) +
                                "' kernel");
  return f;
}

} // namespace

std::vector<reduction_step> bind_reduction(const reduction_plan &plan, const reduction_kernels &k,
                                           unsigned block, unsigned shared, const void *in,
                                           const reduction_buffers &b) {
  // Steps write only scratch (out, partials, ping, pong); only a step's input may be `in`.
  auto at = [&](buffer_slot slot) -> void * {
    switch (slot) {
    case buffer_slot::input:
      throw invalid_configuration("a reduction step would write to its input");
    case buffer_slot::out:
      return b.out;
    case buffer_slot::partials:
      return b.partials;
    case buffer_slot::ping:
      return b.ping;
    case buffer_slot::pong:
      return b.pong;
    }
    return nullptr;
  };
  std::vector<reduction_step> steps;
  steps.reserve(plan.steps.size());
  for (const planned_step &st : plan.steps)
    steps.push_back({kernel_for(k, st.role), static_cast<unsigned>(st.grid),
                     st.single_thread ? 1u : block, st.single_thread ? 0u : shared,
                     st.in == buffer_slot::input ? in : at(st.in),
                     at(st.out), st.n, at(st.partials)});
  return steps;
}

std::vector<reduction_step> plan_reduction(protocol proto, const reduction_kernels &k,
                                           const grid_rule &grid_of, unsigned block,
                                           unsigned shared, const void *in, std::uint64_t n,
                                           const reduction_buffers &b) {
  return bind_reduction(plan_reduction_steps(proto, grid_of, n, 0), k, block, shared, in, b);
}

} // namespace reducetune
