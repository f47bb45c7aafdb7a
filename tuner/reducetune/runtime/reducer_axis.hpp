// One device's side of a reducer's axis call (reducer::reduce_axis): the axis family's points
// it has prepared (compiled, loaded), each shape's plan (measure/axis_launch: the pass, then
// the finish kernel when the point splits r), and the partials scratch of each stream.
//
// As the whole-array side (reducer_device.hpp): the scratch belongs to (stream, capture
// sequence), grows only, and is allocated before the first launch on it; during a CUDA-graph
// capture everything a first call needs (compile, load, allocate) runs in relaxed capture
// mode, so it enqueues nothing on the captured stream, and a graph's scratch is never freed
// or shared. A call on a shape it has seen on that stream allocates and synchronises nothing.
//
// tile_ticket's counters (measure/axis_launch.hpp) live in the scratch too, in a zone of their
// own after the partials' zone: zeroed once when the scratch is allocated (outside the captured
// stream: zero_device_bytes), left zero by every launch, and never written by another plan's
// partials (a ticket plan's partials end where the counter zone begins: partials_for). One set
// of counters per scratch is enough: calls on one stream run one after another, and a captured
// graph has its own scratch, whose replays CUDA orders behind one another (cudaGraphLaunch).
#pragma once

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/runtime/axis_dispatch.hpp"
#include "reducetune/runtime/reducer_device.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace reducetune {

class axis_device {
public:
  axis_device(const reducer_context &context, int ordinal);

  void reduce(const void *in, const reduction_shape &shape, void *out, cudaStream_t stream);
  [[nodiscard]] axis_choice choice(const reduction_shape &shape);

private:
  struct prepared {
    axis_choice choice; // source, preset, labels, determinism, block (shape-free fields)
    std::optional<search_space> space;
    std::optional<point> p;
    std::unique_ptr<loaded_module> module;
  };
  struct planned {
    const prepared *point;
    axis_plan plan;
    axis_kernels kernels; // resolved once per shape: a call looks up no kernel by name
  };
  const planned &plan_for(const reduction_shape &shape);
  const prepared &point_for(const reduction_shape &shape);
  const prepared &rule_point(const reduction_shape &shape);
  planned plan_of(const reduction_shape &shape); // the rule's where the table's cannot
  // entry: nullptr for the rule; tuned: the file's table (else the caller's)
  std::unique_ptr<prepared> prepare(const axis_entry *entry, bool tuned,
                                    const reduction_shape &shape);
  // The caller's entry for the shape, else this device's tuned one; {nullptr, false} for none.
  [[nodiscard]] std::pair<const axis_entry *, bool> entry_for(const reduction_shape &shape) const;
  [[nodiscard]] std::string why_of(const axis_entry &entry, bool tuned) const;
  [[nodiscard]] axis_determinism level() const;
  // false when the call asks for batch_invariant and `p` is not, by the family's let
  [[nodiscard]] bool invariant_enough(const search_space &s, const point &p,
                                      const reduction_shape &shape) const;
  // The scratch of (stream, capture): a partials zone, then a counter zone (zero outside calls).
  struct scratch {
    device_buffer buffer;
    std::uint64_t partials = 0, counters = 0; // the zones' bytes
  };
  // The `partials` argument of the plan's launches on (stream, capture); nullptr for none.
  void *partials_for(cudaStream_t stream, unsigned long long capture, const axis_plan &plan);

  const reducer_context &m_context;
  device_info m_info;
  const axis_device_table *m_tuned; // this device's table of the file (axis_tables.hpp)
  std::mutex m_mutex;
  std::map<std::string, std::unique_ptr<prepared>> m_points; // by table labels or preset
  std::set<std::string> m_failed; // table entries this device cannot run
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, planned> m_plans;
  std::map<std::pair<cudaStream_t, unsigned long long>, scratch> m_partials;
  std::vector<device_buffer> m_captured; // outgrown partials a captured graph may still read
};

} // namespace reducetune
