// The runtime: an application reduces a device buffer with the tuned kernel.
//
//   auto r = reducetune::reducer::from_database("results.db", dtype::float32, reduce_op::sum);
//   r.reduce(d_in, n, d_out, stream);          // result written to d_out, on stream
//   float total; r.reduce_to_host(d_in, n, &total, stream);  // copied back, stream synced
//
// For each n the reducer takes the tuned point of the current device (its table by UUID, then
// by name, then the first of the same compute capability, as the exported header does; the
// size rule is the Catalog's nearest measured size), deterministic unless the options admit
// others. A device, type and operator without a tuned table, or a tuned point this device
// cannot run, gets the tunable family's default preset, and the reducer says so once (on
// stderr, and in fallbacks()). Each point is compiled once with NVRTC (cubins cached on disk
// across processes, see jit/folder_cache.hpp), loaded once per device, then launched on the
// caller's pointer and stream with no allocation and no synchronisation.
//
// Thread-safe: several threads may reduce with one reducer, on any devices and streams. The
// scratch a launch needs (block partials, the ticket counter) belongs to (device, stream), so
// concurrent streams never share it and calls on one stream are ordered by the stream.
#pragma once

#include "reducetune/space/element.hpp"
#include "reducetune/db/application_ranking.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/runtime/axis_dispatch.hpp"
#include "reducetune/runtime/axis_tables.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace reducetune {

struct reducer_options {
  // Which points a table may answer with; deterministic and unflagged by default.
  point_selection selection{};
  // Where compiled cubins are kept; empty: $REDUCETUNE_CACHE_DIR, else
  // $XDG_CACHE_HOME/reducetune/cubin, else ~/.cache/reducetune/cubin. A folder that cannot be
  // written only costs a compile per process.
  std::filesystem::path cache_dir;
  // The default preset (of the tunable family) for what the table does not answer.
  std::string default_preset = "good";
  // Say each fallback once on stderr (fallbacks() holds them either way).
  bool log_fallbacks = true;
  // How a results database's points are ranked at each size (db/application_ranking.hpp): by
  // median + (launches - 1) x extra_launch_s, what a lone call costs an application; 0 ranks
  // by the median alone, as `reducetune best` does. An exported table (from_json) holds the
  // export's application pick beside the median's winner: any value > 0 takes the pick, 0
  // the winner (the export ranked with db::default_extra_launch_s).
  double extra_launch_s = db::default_extra_launch_s;
  // The axis call's points per shape (axis_dispatch.hpp), the caller's: they answer first.
  std::vector<axis_entry> axis_table;
  // The axis call's tuned tables per device (axis_tables.hpp), which from_database and
  // from_json fill from the file for axis_level; shapes neither table answers get the
  // built-in rule by shape.
  std::vector<axis_device_table> axis_tables;
  // The axis call's determinism (axis_dispatch.hpp): batch_invariant has the rule choose from
  // r and inner alone and skips (a fallback) table entries that are not batch_invariant.
  axis_determinism axis_level = axis_determinism::run_to_run;
};

class search_space;

// What the reducer launches for one n on one device, and why.
struct reducer_choice {
  std::string source;      // "tuned" | "default"
  std::string device_name; // the table's device ("" for the default preset)
  std::uint64_t bucket_n = 0; // the measured size that answers (0 for the default preset)
  // The point launched, typed, on the space of this device's limits: a caller that measures
  // or shows it asks these rather than reading the labels back.
  std::shared_ptr<const search_space> space{};
  point chosen{};
  std::string family, variant, launch; // its labels, for people
  std::string determinism; // run_to_run | none
  std::string protocol;    // two_pass | ticket | atomic | multipass
  unsigned launches = 0;   // kernel launches per reduce() at this n
  unsigned grid = 0, block = 0;
};

class dispatch_table;
class reducer_device;
class axis_device;

class reducer {
public:
  // The fastest selected point per size of a results database (opened read-only).
  [[nodiscard]] static reducer from_database(const std::filesystem::path &db, dtype type,
                                             reduce_op op, reducer_options options = {});
  // The rules of an exported JSON table (`reducetune export json`).
  [[nodiscard]] static reducer from_json(const std::filesystem::path &json, dtype type,
                                         reduce_op op, reducer_options options = {});
  // One point of space `s` at every size on every device, whatever the selection says (the
  // caller named it): what `reducetune calibrate` times as an application calls it. The
  // point is checked on each device's own limits; one the device cannot run falls back to
  // the default preset as ever (choice().source says "default").
  [[nodiscard]] static reducer for_point(const search_space &s, const point &p,
                                         reducer_options options = {});
  // No table: the default preset at every size (what an untuned GPU gets).
  [[nodiscard]] static reducer untuned(dtype type, reduce_op op, reducer_options options = {});

  reducer(reducer &&) noexcept;
  reducer &operator=(reducer &&) noexcept;
  ~reducer();

  // Reduces the n elements at `in` (device memory of the current device) into the one element
  // at `out` (device memory), enqueued on `stream`. n = 0 throws invalid_configuration.
  void reduce(const void *in, std::uint64_t n, void *out, cudaStream_t stream = nullptr);
  // The same, then copies the result to host memory and waits for the stream.
  void reduce_to_host(const void *in, std::uint64_t n, void *host_out,
                      cudaStream_t stream = nullptr);

  // Reduces the middle axis of the contiguous tensor at `in` viewed as (outer, r, inner) into
  // the outer * inner elements at `out` (device memory), enqueued on `stream`, with the point
  // of options.axis_table for the shape, else the tuned point of this device's table in the
  // file the reducer was made from (from_database, from_json: axis_tables.hpp; the nearest
  // tuned shape, db/shape_rule.hpp), else the built-in rule (axis_dispatch.hpp). An extent
  // of 0 throws invalid_configuration. Safe in a CUDA-graph capture (reducer_axis.hpp).
  void reduce_axis(const void *in, const reduction_shape &shape, void *out,
                   cudaStream_t stream = nullptr);
  // What reduce_axis launches for the shape on the current device (compiling it if needed).
  [[nodiscard]] axis_choice choice_axis(const reduction_shape &shape);

  [[nodiscard]] dtype type() const noexcept { return m_type; }
  [[nodiscard]] reduce_op op() const noexcept { return m_op; }
  // What reduce() launches for n on the current device (compiling it if not yet done).
  [[nodiscard]] reducer_choice choice(std::uint64_t n);
  // Every fallback to the default preset so far, one line each.
  [[nodiscard]] std::vector<std::string> fallbacks() const;

private:
  struct state;
  reducer(dtype type, reduce_op op, std::unique_ptr<state> s);
  reducer_device &device();
  axis_device &axis();

  dtype m_type;
  reduce_op m_op;
  std::unique_ptr<state> m_state;
};

} // namespace reducetune
