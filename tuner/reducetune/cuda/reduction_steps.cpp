#include "reducetune/cuda/reduction_steps.hpp"

#include "reducetune/errors.hpp"

#include <limits>
#include <string>

namespace reducetune {
namespace {

CUfunction needed(CUfunction f, const char *role) {
  if (f == nullptr)
    throw invalid_configuration(std::string{"the launch plan has no '"} + role + "' kernel");
  return f;
}

} // namespace

unsigned checked_grid(std::uint64_t blocks, std::uint64_t n) {
  if (blocks == 0 || blocks > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw invalid_configuration("grid of " + std::to_string(blocks) + " blocks for n = " +
                                std::to_string(n) + " is outside 1 .. 2^31 - 1");
  return static_cast<unsigned>(blocks);
}

std::vector<reduction_step>
plan_reduction(protocol proto, const reduction_kernels &k,
               const std::function<std::uint64_t(std::uint64_t)> &grid_of, unsigned block,
               unsigned shared, const void *in, std::uint64_t n, const reduction_buffers &b) {
  const unsigned grid = checked_grid(grid_of(n), n);
  std::vector<reduction_step> steps;
  switch (proto) {
  case protocol::multipass: {
    // Each pass writes one element per block; the pass of one block writes the result.
    void *buffers[2] = {b.ping, b.pong};
    for (int i = 0;; i ^= 1) {
      const unsigned g = checked_grid(grid_of(n), n);
      if (n > 1 && g >= n)
        throw invalid_configuration("multipass grid does not shrink: " + std::to_string(g) +
                                    " blocks for n = " + std::to_string(n));
      void *dst = g == 1 ? b.out : buffers[i];
      steps.push_back({needed(k.pass, "pass"), g, block, shared, in, dst, n, b.partials});
      if (g == 1)
        return steps;
      in = dst;
      n = g;
    }
  }
  case protocol::two_pass:
    if (grid == 1) { // the one block's partial is the result: let it land in out
      steps.push_back({needed(k.pass, "pass"), 1, block, shared, in, b.out, n, b.out});
      return steps;
    }
    steps.push_back({needed(k.pass, "pass"), grid, block, shared, in, b.out, n, b.partials});
    steps.push_back({needed(k.final, "final"), 1, block, shared, b.partials, b.out, grid,
                     b.partials});
    return steps;
  case protocol::atomic:
    steps.push_back({needed(k.init, "init"), 1, 1, 0, in, b.out, n, b.partials});
    steps.push_back({needed(k.pass, "pass"), grid, block, shared, in, b.out, n, b.partials});
    return steps;
  case protocol::ticket:
  case protocol::host: // the pass writes partials[blockIdx.x]; the host finish follows
    steps.push_back({needed(k.pass, "pass"), grid, block, shared, in, b.out, n, b.partials});
    return steps;
  }
  throw invalid_configuration("unknown protocol");
}

} // namespace reducetune
