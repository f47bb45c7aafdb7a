// What an application needs to launch an exported point without re-deriving anything: the
// search space's launch plan (block size, dynamic shared memory, protocol, kernels) with the
// grid as a typed rule, for one device. Computed by the space, never stored twice.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "reducetune/db/catalog.hpp"
#include "reducetune/space/space.hpp"

namespace reducetune {
class template_library;
}

namespace reducetune::db {

struct kernel_ref {
  std::string role;            // init | pass | final
  std::string name_expression; // as given to NVRTC
  std::string lowered;         // its mangled name in the cubin ("" when no build is stored)
};

struct launch_rule {
  std::string protocol; // two_pass | atomic | ticket | multipass (docs/architecture.md)
  unsigned block_size = 0;
  unsigned dynamic_shared_bytes = 0;
  bool in_place = false;        // the pass overwrites its input: launch it on a scratch copy
  bool device_launches = false; // dynamic parallelism (relocatable code, device runtime)
  // grid(n) = min(ceil_div(n, items_per_block), max_blocks), no cap when max_blocks is 0;
  // multipass applies it again to the partials until one value is left.
  std::uint64_t items_per_block = 0;
  std::uint64_t max_blocks = 0;
  std::string grid_expression; // the family's, for people
  std::vector<kernel_ref> kernels; // in launch order
};

// Kernel launches one reduction of n elements makes under rule r (what the host enqueues;
// nested launches' children are the device's): the space's planner's count
// (space/reduction_plan.hpp), the one the runner and the runtime launch. Throws
// invalid_configuration for an unknown protocol or a grid the planner refuses.
[[nodiscard]] unsigned launches_at(const launch_rule &r, std::uint64_t n);
// grid(n) of rule r (see launch_rule::items_per_block).
[[nodiscard]] std::uint64_t grid_at(const launch_rule &r, std::uint64_t n) noexcept;

// {name expression: lowered name} of a point compiled for an architecture (compute capability
// x 10). The store keeps the names of the builds it recorded; for a point without one, an
// export may be given this (the driver passes its NVRTC compiler: the jit layer sits above).
using lowered_names_fn =
    std::function<std::map<std::string, std::string>(const search_space &, const point &, int)>;

// The launch rule of a typed point of space s, on the device whose limits s holds: what the
// reducer launches and the exports print, from the point itself (no label is written or read
// on the way). `lowered` gives the kernels' lowered names ({name expression: lowered name};
// empty: left empty). A text saying why when there is none (a grid that is not of the form
// above, the host protocol, whose result is not on the device, a point the space refuses).
[[nodiscard]] std::variant<launch_rule, std::string>
launch_rule_of(const search_space &s, const point &p,
               const std::map<std::string, std::string> &lowered = {});

// The launch rule of a Catalog entry (a stored row) on device d, with the families of lib: the
// store reads the entry's point once (point_records.hpp, stored_point), then as above; a text
// saying why when there is none (also: a family lib lacks, a label that no longer parses).
// Lowered names come from the entry's stored build, else from `lowered` (when given), else are
// left empty.
[[nodiscard]] std::variant<launch_rule, std::string>
launch_rule_of(const template_library &lib, const device_record &d, const catalog_entry &e,
               const lowered_names_fn &lowered = {});

namespace detail {
// {name expression: lowered name} of a stored build's JSON ("{}" or malformed: none).
[[nodiscard]] std::map<std::string, std::string> stored_names(const std::string &lowered_json);
// The plan's kernels in launch order (init, pass, final), with their lowered names where known.
[[nodiscard]] std::vector<kernel_ref> kernels_of(const launch_plan &plan,
                                                 const std::map<std::string, std::string> &lowered);
} // namespace detail

} // namespace reducetune::db
