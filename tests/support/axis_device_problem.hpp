// The device side of an axis GPU test (gpu_test_axis*, gpu_test_half_axis): one problem's input
// uploaded `offset` elements past an aligned device address (misaligned rows and tiles), its
// output buffer, and one point's result through measure/axis_launch (the pass over the family's
// grid at the shape, then the finish kernel for split > 1), or its hot median time.
#pragma once

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/event.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rt_test {

struct axis_device_problem {
  using bytes = std::vector<unsigned char>;

  reducetune::problem p;
  std::size_t offset; // elements of the upload before the input
  reducetune::device_buffer in, out;

  axis_device_problem(const reducetune::problem &pr, const bytes &host, std::size_t off = 0)
      : p(pr), offset(off), in(host.size()), out(pr.outputs() * reducetune::size_of(pr.type)) {
    in.upload(host.data(), host.size());
  }

  [[nodiscard]] const void *input() const {
    return static_cast<const unsigned char *>(in.data()) + offset * reducetune::size_of(p.type);
  }

  // The outputs of a loaded point (anything with `p`, a point, and `module`, its loaded
  // module); the output is filled with 0xa5 first, so that no stale result passes.
  template <class Loaded>
  [[nodiscard]] bytes run(const reducetune::search_space &s, const Loaded &lp) const {
    const reducetune::axis_plan plan = reducetune::plan_axis(s, lp.p, p.shape);
    reducetune::device_buffer partials(plan.partials_bytes());
    reducetune::zero_counters(plan, partials.data()); // tile_ticket: zero before its first launch
    RT_CUDA_CALL(cudaMemset(out.data(), 0xa5, out.size()));
    reducetune::launch_axis(*lp.module, plan, input(), out.data(), partials.data(), nullptr);
    RT_CUDA_CALL(cudaDeviceSynchronize());
    bytes result(out.size());
    out.download(result.data(), result.size());
    return result;
  }

  // Median seconds of up to 10 hot launches of a loaded point (CUDA events around each), after
  // one warm-up launch; 2 for a point that takes long (a thread per row of 2^22).
  template <class Loaded>
  [[nodiscard]] double median_seconds(const reducetune::search_space &s, const Loaded &lp) const {
    const reducetune::axis_plan plan = reducetune::plan_axis(s, lp.p, p.shape);
    reducetune::device_buffer partials(plan.partials_bytes());
    reducetune::zero_counters(plan, partials.data()); // tile_ticket: zero before its first launch
    std::vector<double> times;
    reducetune::event start, stop;
    for (int k = 0; k < 11 && (k < 3 || times.front() < 0.05); ++k) {
      start.record(nullptr);
      reducetune::launch_axis(*lp.module, plan, input(), out.data(), partials.data(), nullptr);
      stop.record(nullptr);
      const double t = reducetune::elapsed_seconds(start, stop);
      if (k > 0) times.push_back(t);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }
};

} // namespace rt_test
