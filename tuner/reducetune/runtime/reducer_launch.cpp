// The launches of one reduction (docs/architecture.md, "Launch protocols"), on the caller's
// input and output: the same sequence as measure/launch_sequence.cpp, with the result
// written where the caller asked instead of into the runner's own buffer.
#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/runtime/reducer_device.hpp"

namespace reducetune {
namespace {

// One kernel of the sequence on the caller's stream; `partials` defaults to the scratch's.
struct launcher {
  cudaStream_t stream;
  void *partials;
  void *ticket;

  void operator()(CUfunction f, unsigned grid, unsigned block, unsigned shared, const void *in,
                  void *out, std::uint64_t n, void *partials_arg = nullptr) const {
    launch_reduction_kernel(f, grid, block, shared, stream, in, out, n,
                            partials_arg != nullptr ? partials_arg : partials, ticket);
  }
};

} // namespace

void reducer_device::enqueue(const prepared_point &p, const void *in, std::uint64_t n, void *out,
                             cudaStream_t stream) {
  scratch &s = scratch_for(stream, p, n);
  const std::size_t elem = size_of(m_context.type);
  if (p.in_place) { // the pass overwrites what it reads: never the caller's input
    RT_CUDA_CALL(cudaMemcpyAsync(s.copy.data(), in, n * elem, cudaMemcpyDeviceToDevice, stream));
    in = s.copy.data();
  }
  const launcher launch{stream, s.partials.data(), s.ticket.data()};
  const unsigned grid = p.grid(n);
  switch (p.proto) {
  case protocol::two_pass:
    if (grid == 1) { // the one block's partial is the result: let it land in out
      launch(p.pass, 1, p.block, p.shared, in, out, n, out);
      return;
    }
    launch(p.pass, grid, p.block, p.shared, in, out, n);
    launch(p.final, 1, p.block, p.shared, s.partials.data(), out, grid);
    return;
  case protocol::atomic:
    launch(p.init, 1, 1, 0, in, out, n);
    launch(p.pass, grid, p.block, p.shared, in, out, n);
    return;
  case protocol::ticket:
    launch(p.pass, grid, p.block, p.shared, in, out, n);
    return;
  case protocol::host: // db::launch_rule_of gives such a point no rule; never prepared
    throw invalid_configuration("the host protocol finishes on the CPU: the runtime cannot "
                                "write its result to a device pointer");
  case protocol::multipass: {
    void *buffers[2] = {s.ping.data(), s.pong.data()};
    for (int i = 0;; i ^= 1) {
      const unsigned g = p.grid(n);
      if (n > 1 && g >= n)
        throw invalid_configuration("multipass grid does not shrink at n = " + std::to_string(n));
      void *dst = g == 1 ? out : buffers[i];
      launch(p.pass, g, p.block, p.shared, in, dst, n);
      if (g == 1)
        return;
      in = dst;
      n = g;
    }
  }
  }
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
