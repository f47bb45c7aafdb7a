// What `reducetune calibrate` times at each tuned axis shape (issue 26, item 4): the shape's
// points that have an axis launch rule on the device, fastest replayed median first, as the
// whole array's candidates (application_ranking.hpp), each saying whether it is batch_invariant
// (asked of the search space) so that calibrate times the first few of both levels and a
// batch_invariant point is compared with batch_invariant ones only. How the recorded times then
// decide each shape's picks: db/axis_picks.hpp.
#pragma once

#include "reducetune/db/application_ranking.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/space/problem.hpp"

#include <cstdint>
#include <vector>

namespace reducetune {
class template_library;
}

namespace reducetune::db {

struct axis_candidate {
  // launches: the point's kernels at the shape; application_s: its recorded lone call (0: none)
  application_candidate candidate;
  bool batch_invariant = false;
};

struct axis_shape_candidates {
  reduction_shape shape;
  // The first application_scan launchable points, and the first application_scan
  // batch_invariant ones beyond them, fastest replayed median first.
  std::vector<axis_candidate> candidates;
  // The measurement ids of the shape's picks (axis_picks) as the file stands; 0: none.
  std::int64_t run_to_run_pick = 0, batch_invariant_pick = 0;
};

// One per shape of t, in t's order.
[[nodiscard]] std::vector<axis_shape_candidates> axis_candidates_of(const catalog_axis_table &t,
                                                                    const device_record &d,
                                                                    const template_library &lib);

} // namespace reducetune::db
