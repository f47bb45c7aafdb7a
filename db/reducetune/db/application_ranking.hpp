// Which measured point an application should get at each size, among the fastest few
// selected points the database holds there: the one an application's lone call was measured
// fastest with (`reducetune calibrate`, rt_application_times; near-ties go to the better
// replayed median), where the size has such times; else the one with the least
// median + (launches − 1) × extra_launch_s. Decided here, once, for the runtime's Reducer (from a database) and
// for `export json` (each rule's "application" pick, which a Reducer built from the exported
// table then uses).
//
// Why not simply the fastest median: the tuner times points by graph replay, where a second
// dependent kernel costs about a microsecond; an application's lone call pays each launch in
// full. On an H100 the two-launch points the tuner preferred at 2^16–2^20 took 11.0–11.6 µs
// per call against 8.6 µs for a one-launch point whose replayed median was within 0.3 µs of
// theirs (docs/results/h100_2026-11-23_runtime/run1_before_fast_path.md). The launches of a
// point at n are the launch rule's (launches_at), decided once. The estimate still misses what
// the protocol cannot see: an application finds data the size of the L2 hot, where another
// point may be fastest (on an H200 the estimate's picks took 0.97-0.99 x CUB's lone call at
// 2^24-2^26, docs/results/h200_2026-11-23_tune_and_benches/), hence the measured times.
#pragma once

#include "reducetune/db/catalog.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/space/element.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>
#include <string>
#include <utility>

namespace reducetune {
class template_library;
}

namespace reducetune::db {

class database;

// How many of a size's fastest points are weighed (the rest are slower than the winner by
// more than any launch is worth), and how far down the list the fastest point of each launch
// count is looked for beyond them.
inline constexpr std::size_t application_candidates = 16;
inline constexpr std::size_t application_scan = 64;
// Lone-call medians of one calibration within this fraction of the fastest are a tie, broken
// by the replayed median (the better-measured of the two): on an H200 (2026-11-24) a pick
// 0.5-0.7 % faster by its lone call was 5 % slower than another under the protocol, where it
// trailed CUB (int32 sum 2^12, float32 max 2^20), and lone-call medians of one point moved by
// more than 2 % between calibrate and the runtime benchmark's rounds.
inline constexpr double application_tie = 0.02;
// What one extra dependent launch costs a lone call, beyond graph replay (the H100
// measurement above: 2.5–3 µs per call for the second launch).
inline constexpr double default_extra_launch_s = 2.5e-6;

struct application_pick {
  std::string family, variant, launch, determinism;
  bool flagged = false;
  double median_s = 0.0;
  unsigned launches = 0;
  double application_s = 0.0; // a lone call's measured median (0: not measured)
};

// What the measured ranking weighs of one candidate: its lone-call median (0: not measured) and
// its replayed median.
struct call_cost {
  double application_s = 0.0;
  double median_s = 0.0;
};
// The pick among candidates by their measured lone calls, the one rule of calibrated sizes and
// shapes: of the measured ones, those within application_tie of the fastest call, and of them
// the least replayed median (the first of equal ones); nullopt when none is measured.
[[nodiscard]] std::optional<std::size_t> measured_pick(std::span<const call_cost> costs);

// One of a size's candidates: a measurement (its row id) and what is known of its cost.
struct application_candidate {
  std::int64_t measurement_id = 0;
  application_pick pick;
};

// (UUID of the model's first device, n) -> what the ranking weighs there and `reducetune
// calibrate` measures: the fastest `application_candidates` selected points with a launch
// rule on the model, fastest median first, then the fastest of each launch count they lack
// (among the first `application_scan`). Sizes of a model the Catalog does not hold are left
// out.
using candidate_lists =
    std::map<std::pair<std::string, std::uint64_t>, std::vector<application_candidate>>;
[[nodiscard]] candidate_lists application_candidates_of(const catalog &c, const database &db,
                                                        dtype type, reduce_op op,
                                                        const point_selection &selection,
                                                        const template_library &lib);
// The key under which candidate_lists files the sizes of the device with this UUID (its
// model's first device); nullopt for a UUID the database does not hold.
[[nodiscard]] std::optional<std::string> model_key_of(const database &db, const std::string &uuid);

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
