#include "reducetune/runtime/application_ranking.hpp"

namespace reducetune {

void rank_for_applications(std::vector<dispatch_device> &devices, const db::catalog &c,
                           const db::database &db, dtype type, reduce_op op,
                           const point_selection &selection, const template_library &lib,
                           double extra_launch_s) {
  const auto picks = db::rank_for_applications(c, db, type, op, selection, lib, extra_launch_s);
  for (auto &dev : devices)
    for (auto &rule : dev.rules)
      if (const auto it = picks.find({dev.uuid, rule.bucket_n}); it != picks.end())
        rule = {rule.bucket_n, it->second.family, it->second.variant, it->second.launch,
                it->second.determinism, it->second.flagged};
}

} // namespace reducetune
