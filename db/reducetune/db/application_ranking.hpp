// Which measured point an application should get at each size: the one with the least
// median + (launches − 1) × extra_launch_s, among the fastest few selected points the
// database holds there. Decided here, once, for the runtime's Reducer (from a database) and
// for `export json` (each rule's "application" pick, which a Reducer built from the exported
// table then uses).
//
// Why not simply the fastest median: the tuner times points by graph replay, where a second
// dependent kernel costs about a microsecond; an application's lone call pays each launch in
// full. On an H100 the two-launch points the tuner preferred at 2^16–2^20 took 11.0–11.6 µs
// per call against 8.6 µs for a one-launch point whose replayed median was within 0.3 µs of
// theirs (docs/results/h100_2026-11-23_runtime/run1_before_fast_path.md). The launches of a
// point at n are the launch rule's (launches_at), decided once.
#pragma once

#include "reducetune/db/catalog.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/space/element.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace reducetune {
class template_library;
}

namespace reducetune::db {

class database;

// How many of a size's fastest points are weighed (the rest are slower than the winner by
// more than any launch is worth).
inline constexpr int application_candidates = 16;
// What one extra dependent launch costs a lone call, beyond graph replay (the H100
// measurement above: 2.5–3 µs per call for the second launch).
inline constexpr double default_extra_launch_s = 2.5e-6;

struct application_pick {
  std::string family, variant, launch, determinism;
  bool flagged = false;
  double median_s = 0.0;
  unsigned launches = 0;
};

// (UUID of the model's first device, as the Catalog keys its devices; bucket n) -> the
// candidate of least application cost. Candidates without a launch rule on their device are
// out of the choice; a size whose every candidate lacks one has no pick.
using application_picks = std::map<std::pair<std::string, std::uint64_t>, application_pick>;

[[nodiscard]] application_picks rank_for_applications(const catalog &c, const database &db,
                                                      dtype type, reduce_op op,
                                                      const point_selection &selection,
                                                      const template_library &lib,
                                                      double extra_launch_s);

} // namespace reducetune::db
