// The axis family's part of both exports (issue 26, item 4): per device, type and operator,
// the picks of each tuned shape (db/axis_picks.hpp), and the rule between them
// (db/shape_rule.hpp). A Catalog without axis rows exports nothing here, so the exports of
// whole-array files stay byte for byte what they were (scripts/golden).
#pragma once

#include "reducetune/db/catalog.hpp"
#include "reducetune/db/launch_rule.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace reducetune {
class template_library;
}

namespace reducetune::db {

// Whether any device of c holds an axis table.
[[nodiscard]] bool has_axis_tables(const catalog &c) noexcept;

// How an untuned shape finds its tuned one, for people (db/shape_rule.hpp says it in full).
inline constexpr const char *shape_rule_text =
    "rows (inner == 1) and columns (inner > 1) apart; the exact shape, else the nearest tuned "
    "shape in (round(log2 r), round(log2 outer*inner)) by squared distance, ties to the larger "
    "r, then to more outputs, then to the earlier rule; a batch_invariant call takes each "
    "rule's batch_invariant_pick (null: that shape is left out)";

// d's "axis_tables" array of export_json.
[[nodiscard]] nlohmann::ordered_json axis_tables_json(const catalog_device &d,
                                                      const template_library &lib,
                                                      const lowered_names_fn &lowered);

// The header's axis part: its types, tables and select_axis() (export_header), after the
// whole-array part, inside the export's namespace.
[[nodiscard]] std::string axis_header(const catalog &c, const template_library &lib,
                                      const lowered_names_fn &lowered);

namespace detail {
// A stored JSON text as ordered JSON, `fallback` where it does not parse (both exports).
[[nodiscard]] nlohmann::ordered_json parsed_json(const std::string &json,
                                                 nlohmann::ordered_json fallback);
// The "kernels" array of an exported rule: role, name expression, lowered name.
[[nodiscard]] nlohmann::ordered_json kernels_json(const std::vector<kernel_ref> &kernels);
// The test of one key of the device-matching rule in the header's select() on `tables[i]`
// (export_header.cpp); select_axis() runs the same on its own tables.
[[nodiscard]] std::string_view select_condition(device_key k);
} // namespace detail

} // namespace reducetune::db
