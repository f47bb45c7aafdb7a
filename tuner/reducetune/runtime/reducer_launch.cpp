// The launches of one reduction (docs/architecture.md, "Launch protocols") on the caller's
// input and stream: the steps are cuda/reduction_steps', as the runner's, with the result
// written where the caller asked.
#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/cuda/reduction_steps.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/runtime/reducer_device.hpp"

namespace reducetune {

void reducer_device::enqueue(const prepared_point &p, const void *in, std::uint64_t n, void *out,
                             cudaStream_t stream) {
  if (p.proto == protocol::host) // launch_rule_of gives host points no rule: never here
    throw invalid_configuration("the host protocol combines on the CPU; the reducer writes "
                                "its result to device memory and does not run it");
  scratch &s = scratch_for(stream, p, n);
  if (p.in_place) { // the pass overwrites what it reads: never the caller's input
    RT_CUDA_CALL(cudaMemcpyAsync(s.copy.data(), in, n * size_of(m_context.type),
                                 cudaMemcpyDeviceToDevice, stream));
    in = s.copy.data();
  }
  const auto steps = plan_reduction(
      p.proto, {p.pass, p.final, p.init}, [&](std::uint64_t m) { return db::grid_at(p.rule, m); },
      p.block, p.shared, in, n, {out, s.partials.data(), s.ping.data(), s.pong.data()});
  for (const reduction_step &st : steps)
    launch_reduction_kernel(st.kernel, st.grid, st.block, st.shared, stream, st.in, st.out,
                            st.n, st.partials, s.ticket.data());
}

void reducer_device::reduce(const void *in, std::uint64_t n, void *out, cudaStream_t stream) {
  std::lock_guard lock(m_mutex);
  enqueue(point_for(n), in, n, out, stream);
}

void reducer_device::reduce_to_host(const void *in, std::uint64_t n, void *host_out,
                                    cudaStream_t stream) {
  std::lock_guard lock(m_mutex);
  const prepared_point &p = point_for(n);
  scratch &s = scratch_for(stream, p, n);
  enqueue(p, in, n, s.result.data(), stream);
  RT_CUDA_CALL(cudaMemcpyAsync(host_out, s.result.data(), size_of(m_context.type),
                               cudaMemcpyDeviceToHost, stream));
  RT_CUDA_CALL(cudaStreamSynchronize(stream));
}

reducer_choice reducer_device::choice(std::uint64_t n) {
  std::lock_guard lock(m_mutex);
  const prepared_point &p = point_for(n);
  reducer_choice c = p.choice;
  c.grid = p.grid(n);
  c.launches = db::launches_at(p.rule, n);
  return c;
}

} // namespace reducetune
