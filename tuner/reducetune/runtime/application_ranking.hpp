// Which measured point an application should get at each size: the one with the least
// median + (launches − 1) × extra_launch_s, among the fastest few selected points the
// database holds there.
//
// Why not simply the fastest median: the tuner times points by graph replay, where a second
// dependent kernel costs about a microsecond; an application's lone call pays each launch in
// full. On an H100 the two-launch points the tuner preferred at 2^16–2^20 took 11.0–11.6 µs
// per call against 8.6 µs for a one-launch point whose replayed median was within 0.3 µs of
// theirs (docs/results/h100_2026-11-23_runtime/run1_before_fast_path.md). The launches of a
// point at n are the launch rule's (db::launches_at), decided once.
#pragma once

#include "reducetune/runtime/dispatch_table.hpp"

#include <vector>

namespace reducetune {

class template_library;
namespace db {
class catalog;
class database;
} // namespace db

// How many of a size's fastest points are weighed (the rest are slower than the winner by
// more than any launch is worth).
inline constexpr int application_candidates = 16;

// Replaces each rule of `devices` (read from catalog c of database db) by the candidate of
// least application cost. Candidates without a launch rule keep their place out of the
// choice; a size whose every candidate lacks one keeps the Catalog's winner.
void rank_for_applications(std::vector<dispatch_device> &devices, const db::catalog &c,
                           const db::database &db, dtype type, reduce_op op,
                           const point_selection &selection, const template_library &lib,
                           double extra_launch_s);

} // namespace reducetune
