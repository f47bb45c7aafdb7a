#include "reducetune/jit/space_jobs.hpp"

#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"

#include <algorithm>

namespace reducetune {

std::vector<compile_job> select_jobs(const template_library &lib, const device_limits &limits,
                                     const job_selection &s) {
  std::vector<compile_job> jobs;
  const std::size_t pairs = std::max<std::size_t>(1, s.dtypes.size() * s.ops.size());
  for (const auto &f : family::load_all(lib)) {
    if (!s.family.empty() && f.name != s.family)
      continue;
    const bool sampled =
        !s.family.empty() || std::find(s.sampled_families.begin(), s.sampled_families.end(),
                                       f.name) != s.sampled_families.end();
    for (const dtype t : s.dtypes) {
      for (const reduce_op op : s.ops) {
        const search_space space(f, t, op, limits);
        std::vector<variant> points;
        for (const auto &p : space.presets())
          if (space.check(p.point))
            points.push_back(p.point);
        if (sampled) {
          const auto more =
              s.all ? space.valid_points() : space.sample((s.sample + pairs - 1) / pairs, s.seed);
          for (const auto &v : more)
            if (std::find(points.begin(), points.end(), v) == points.end())
              points.push_back(v);
        }
        for (const auto &v : points)
          jobs.push_back({to_label(f, v), request_for(f, v, limits.arch)});
      }
    }
  }
  return jobs;
}

} // namespace reducetune
