// One device's side of a reducer: the tuned points it has prepared (compiled, loaded, their
// kernels looked up), the scratch of each stream, and the launches of one reduction.
#pragma once

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/runtime/dispatch_table.hpp"
#include "reducetune/runtime/reducer.hpp"
#include "reducetune/space/launch_plan.hpp"
#include "reducetune/space/reduction_plan.hpp"

#include <cuda.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace reducetune {

// What every device of one reducer shares.
struct reducer_context {
  dtype type;
  reduce_op op;
  reducer_options options;
  dispatch_table table;
  std::shared_ptr<compiler> jit;
  std::function<void(const std::string &)> fallback; // records (and logs once) a fallback
};

// A point made ready on one device, with the launch rule of its export (launch_rule.hpp),
// which decides its grid and its launches at each n.
struct prepared_point {
  reducer_choice choice;
  db::launch_rule rule;
  protocol proto = protocol::two_pass;
  unsigned block = 0, shared = 0;
  bool in_place = false, device_launches = false;
  CUfunction init = nullptr, pass = nullptr, final = nullptr;
  std::unique_ptr<loaded_module> module;

  [[nodiscard]] unsigned grid(std::uint64_t n) const;
};

class reducer_device {
public:
  reducer_device(const reducer_context &context, int ordinal);

  void reduce(const void *in, std::uint64_t n, void *out, cudaStream_t stream);
  void reduce_to_host(const void *in, std::uint64_t n, void *host_out, cudaStream_t stream);
  [[nodiscard]] reducer_choice choice(std::uint64_t n);

private:
  struct scratch {
    device_buffer partials, ping, pong, copy, result, ticket;
  };
  const prepared_point &point_for(std::uint64_t n);
  [[nodiscard]] std::unique_ptr<prepared_point> prepare(const dispatch_rule *rule);
  // One call made ready: its point, the planner's steps at n, and the scratch they need.
  struct call {
    const prepared_point *point;
    reduction_plan plan;
    scratch *buffers;
  };
  // A stream's scratch, grown to what `plan` needs; during a CUDA-graph capture, the capture
  // sequence's own (capture != 0), which the graph keeps using at every replay: never freed
  // or shared.
  scratch &scratch_for(cudaStream_t stream, unsigned long long capture, const prepared_point &p,
                       const reduction_plan &plan);
  // The point, plan and scratch of one call: relaxed capture mode while `capture` is nonzero,
  // so that compiling, loading and allocating do not invalidate the caller's capture.
  call prepare_call(cudaStream_t stream, unsigned long long capture, std::uint64_t n);
  void enqueue(const call &c, const void *in, std::uint64_t n, void *out, cudaStream_t stream);

  const reducer_context &m_context;
  device_info m_info;
  const dispatch_device *m_table; // nullptr: no tuned table for this device
  std::mutex m_mutex;
  std::deque<std::unique_ptr<prepared_point>> m_points;
  std::map<const dispatch_rule *, const prepared_point *> m_by_rule;
  std::unordered_map<std::uint64_t, const prepared_point *> m_by_n; // memo of rule_for
  std::map<std::pair<cudaStream_t, unsigned long long>, scratch> m_scratch; // (stream, capture)
  std::vector<device_buffer> m_captured; // outgrown buffers a captured graph may still read
  std::uint64_t m_pending_launch_grid = 0; // the largest grid the device pool fits
};

} // namespace reducetune
