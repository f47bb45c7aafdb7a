// The runtime's side of the application ranking (db/application_ranking.hpp decides it):
// each rule of a dispatch table read from a database takes its size's application pick.
#pragma once

#include "reducetune/db/application_ranking.hpp"
#include "reducetune/runtime/dispatch_table.hpp"

#include <vector>

namespace reducetune {

// Replaces each rule of `devices` (read from catalog c of database db) by its size's
// application pick; a size without a pick keeps the Catalog's winner.
void rank_for_applications(std::vector<dispatch_device> &devices, const db::catalog &c,
                           const db::database &db, dtype type, reduce_op op,
                           const point_selection &selection, const template_library &lib,
                           double extra_launch_s);

} // namespace reducetune
