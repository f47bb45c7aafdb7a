// The launches of one reduction (docs/architecture.md, "Launch protocols") on the caller's
// input and stream: the steps are the space's planner's (space/reduction_plan.hpp) bound by
// cuda/reduction_steps, as the runner's, with the result written where the caller asked.
#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/cuda/reduction_steps.hpp"
#include "reducetune/cuda/stream_capture.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/runtime/reducer_device.hpp"

namespace reducetune {

void reducer_device::enqueue(const call &c, const void *in, std::uint64_t n, void *out,
                             cudaStream_t stream) {
  const prepared_point &p = *c.point;
  scratch &s = *c.buffers;
  if (p.proto == protocol::host) // launch_rule_of gives host points no rule: never here
    throw invalid_configuration("the host protocol combines on the CPU; the reducer writes "
                                "its result to device memory and does not run it");
  if (p.in_place) { // the pass overwrites what it reads: never the caller's input
    RT_CUDA_CALL(cudaMemcpyAsync(s.copy.data(), in, n * size_of(m_context.type),
                                 cudaMemcpyDeviceToDevice, stream));
    in = s.copy.data();
  }
  // The planner's steps (space/reduction_plan.hpp), as the runner's and the exports' counts.
  const auto steps = bind_reduction(c.plan, {p.pass, p.final, p.init}, p.block, p.shared, in,
                                    {out, s.partials.data(), s.ping.data(), s.pong.data()});
  for (const reduction_step &st : steps)
    launch_reduction_kernel(st.kernel, st.grid, st.block, st.shared, stream, st.in, st.out,
                            st.n, st.partials, s.ticket.data());
}

void reducer_device::reduce(const void *in, std::uint64_t n, void *out, cudaStream_t stream) {
  std::lock_guard lock(m_mutex);
  enqueue(prepare_call(stream, capture_id(stream), n), in, n, out, stream);
}

void reducer_device::reduce_to_host(const void *in, std::uint64_t n, void *host_out,
                                    cudaStream_t stream) {
  std::lock_guard lock(m_mutex);
  if (capture_id(stream) != 0)
    throw invalid_configuration("a reduction to host memory waits for its result, which a "
                                "CUDA-graph capture cannot: reduce into device memory instead");
  const call c = prepare_call(stream, 0, n);
  enqueue(c, in, n, c.buffers->result.data(), stream);
  RT_CUDA_CALL(cudaMemcpyAsync(host_out, c.buffers->result.data(), size_of(m_context.type),
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
