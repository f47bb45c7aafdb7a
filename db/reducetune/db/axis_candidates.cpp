#include "reducetune/db/axis_candidates.hpp"

#include "reducetune/db/axis_picks.hpp"

#include <variant>

namespace reducetune::db {
namespace {

axis_candidate candidate_of(const catalog_entry &e, const axis_launch_rule &rule) {
  application_pick p{e.variant.family,
                     e.variant.label,
                     e.launch_label,
                     e.variant.determinism,
                     e.variant.flags_json != "[]",
                     e.median_s,
                     static_cast<unsigned>(rule.kernels.size()),
                     e.application_s.value_or(0.0)};
  return {{e.measurement_id, std::move(p)}, rule.batch_invariant};
}

std::vector<axis_candidate> candidates_at(const std::vector<catalog_entry> &ranked,
                                          const reduction_shape &shape, const device_record &d,
                                          const template_library &lib) {
  std::vector<axis_candidate> out;
  std::size_t all = 0, invariant = 0;
  for (const auto &e : ranked) {
    if (all >= application_scan && invariant >= application_scan) break;
    const auto rule = axis_launch_rule_of(lib, d, e, shape);
    const auto *r = std::get_if<axis_launch_rule>(&rule);
    if (r == nullptr || (all >= application_scan && !r->batch_invariant))
      continue; // no launch on this device: the runtime would fall back to its rule
    ++all;
    invariant += r->batch_invariant ? 1 : 0;
    out.push_back(candidate_of(e, *r));
  }
  return out;
}

} // namespace

std::vector<axis_shape_candidates> axis_candidates_of(const catalog_axis_table &t,
                                                      const device_record &d,
                                                      const template_library &lib) {
  std::vector<axis_shape_candidates> out;
  const auto picks = axis_picks(t, d, lib);
  for (std::size_t i = 0; i < t.shapes.size(); ++i) {
    const auto &p = picks[i];
    out.push_back({t.shapes[i], candidates_at(t.ranked[i], t.shapes[i], d, lib),
                   p.fastest ? p.fastest->measurement_id : 0,
                   p.invariant ? p.invariant->measurement_id : 0});
  }
  return out;
}

} // namespace reducetune::db
