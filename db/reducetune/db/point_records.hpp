// The store's rows for a tuning point, filled from what the search space decided about it:
// the only writer of rt_variants' parameters, flags and determinism and of a measurement's
// launch parameters (db/migrations/0004_point_facts.sql says which column holds what).
#pragma once

#include <string>

#include "reducetune/db/records.hpp"
#include "reducetune/db/sqlite.hpp"
#include "reducetune/space/space.hpp"

namespace reducetune {
class template_library;
}

namespace reducetune::db {

// The variant row of p: family, dtype, op, label, compile-time parameters, flags, determinism.
// Flags and determinism are a variant's: no family flags a launch value, and every protocol is
// chosen by compile-time values (a family that did otherwise would be described by its
// default launch config here).
[[nodiscard]] variant_record variant_record_of(const search_space &s, const point &p);
// {name: value} of p's launch config, in declaration order.
[[nodiscard]] std::string launch_parameters_json(const search_space &s, const point &p);

// The typed point a stored row names (a measurement's two labels, a Catalog entry's, an
// exported rule's), read back with the space of the row's family, type and operator: the one
// reading of a stored label outside the migration below, so that every caller above the store
// (exports, the runtime's tables) gets a typed point, never a label to parse. Throws
// invalid_configuration saying which part of the label no longer fits the family.
[[nodiscard]] point stored_point(const search_space &s, const std::string &variant_label,
                                 const std::string &launch_label);

// Rewrites every variant's parameters, flags and determinism and every measurement's launch
// parameters from their labels, read with the families of `lib` (migration to schema 4,
// inside its transaction). A label whose family `lib` lacks, or that no longer parses, gets
// no parameters, determinism 'unknown' and a flag saying so: such a point is only served when
// flagged points are allowed.
void repair_points(database &db, const template_library &lib);

} // namespace reducetune::db
