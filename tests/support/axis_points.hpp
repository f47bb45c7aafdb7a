// Axis points beyond a whole preset list, named, compiled with NVRTC in one batch and loaded on
// the test's device, and the line a hidden timing case prints for one: what the axis GPU tests
// of chosen points run (gpu_test_axis_staged, gpu_test_axis_wide_tiles), and their outputs
// verified.
#pragma once

#include "axis_device_problem.hpp"
#include "catch.hpp"
#include "gpu_context.hpp"

#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/axis_reference.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace rt_test {

struct named_point {
  std::string name;
  reducetune::point p;
  std::unique_ptr<reducetune::loaded_module> module; // set by compile_and_load
};

// The presets of `s` called `names`, in that order; each must exist.
inline std::vector<named_point> named_presets(const reducetune::search_space &s,
                                              const std::vector<std::string> &names) {
  std::vector<named_point> out;
  for (const auto &name : names)
    for (const auto &pp : s.presets())
      if (pp.name == name) out.push_back({pp.name, reducetune::point{pp.point, pp.launch}, {}});
  REQUIRE(out.size() == names.size());
  return out;
}

// Compiles every point in one batch and loads it; a point that does not compile fails the test
// with its log.
inline void compile_and_load(const gpu_context &g, const reducetune::family &f,
                             std::vector<named_point> &points) {
  reducetune::compiler c(g.lib);
  std::vector<reducetune::compile_request> requests;
  for (const auto &np : points)
    requests.push_back(reducetune::request_for(f, np.p.compile, g.limits.arch));
  const auto outcomes = c.compile_batch(requests);
  for (std::size_t i = 0; i < points.size(); ++i) {
    INFO(points[i].name << ": " << outcomes[i].error.substr(0, 2000));
    REQUIRE(outcomes[i].program);
    points[i].module = std::make_unique<reducetune::loaded_module>(*outcomes[i].program);
  }
}

// Every point's outputs of problem `p` (the host input `host`, uploaded as is, the problem's
// elements `offset` elements into it), each verified against the host reference of its rows
// (`what` says which case in a failure): the outputs in the points' order, for the caller's
// checks of their bits.
inline std::vector<std::vector<unsigned char>>
verified_outputs(const reducetune::search_space &s, const reducetune::problem &p,
                 const std::vector<unsigned char> &host, std::size_t offset,
                 const std::vector<named_point> &points, const std::string &what) {
  const reducetune::axis_reference reference(p, host.data() + offset * reducetune::size_of(p.type));
  const axis_device_problem d(p, host, offset);
  std::vector<std::vector<unsigned char>> out;
  for (const auto &np : points) {
    INFO(what << " " << np.name);
    out.push_back(d.run(s, np));
    const reducetune::axis_verdict v = reference.check(out.back().data());
    INFO(v.summary());
    REQUIRE(v.ok());
  }
  return out;
}

// A timing case's line: the problem, the point, its median time, and the rate of `moved` bytes
// (read + written) in GB/s and in % of the device's HBM peak.
inline void print_rate(const gpu_context &g, const std::string &problem, const std::string &point,
                       double seconds, double moved) {
  std::printf("%-36s %-48s %9.1f us %6.0f GB/s %5.1f %%\n", problem.c_str(), point.c_str(),
              seconds * 1e6, moved / seconds / 1e9,
              100 * moved / seconds / g.device.peak_bytes_per_s());
}

} // namespace rt_test
