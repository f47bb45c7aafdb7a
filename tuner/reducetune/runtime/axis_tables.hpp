// The axis call's tuned tables (issue 26, item 5): per tuned device, the point of each tuned
// shape, read from a results database (through the Catalog, db/axis_picks.hpp) or from an
// exported JSON table ("axis_tables", `reducetune export json`), as the whole-array reducer
// reads its dispatch_table from either. The entries of one level only: under run_to_run the
// fastest point of each shape, under batch_invariant the fastest batch_invariant one (a shape
// without one is left out, so its neighbours or the built-in rule answer it). The device at
// hand finds its table by the Catalog's device-matching rule (db/catalog.hpp,
// device_match_order), and in it the entry of a shape by db/shape_rule.hpp.
#pragma once

#include "reducetune/db/catalog.hpp"
#include "reducetune/runtime/axis_dispatch.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace reducetune {

class template_library;

struct axis_device_table {
  std::string name;
  std::vector<std::string> uuids; // every tuned device of the model
  int compute_capability = 0;     // major * 10 + minor
  std::vector<axis_entry> entries; // by shape, as the Catalog orders them
};

// The Catalog's axis tables of (type, op) for `level` (the Catalog holds only the selected
// points); devices without an entry are left out.
[[nodiscard]] std::vector<axis_device_table>
axis_tables_from_catalog(const db::catalog &c, const template_library &lib, dtype type,
                         reduce_op op, axis_determinism level);
// The same from an export_json document (dispatch_table::read_file reads its file) (its devices' "axis_tables"; a document without any,
// as every export of a file without axis rows, gives none); rules the selection refuses
// (flags, determinism none) are left out. Throws invalid_configuration for a malformed one.
[[nodiscard]] std::vector<axis_device_table>
axis_tables_from_json(const nlohmann::json &doc, dtype type, reduce_op op,
                      const point_selection &selection, axis_determinism level);

// The table of the device `q` describes, by db::device_match_order; nullptr when none.
[[nodiscard]] const axis_device_table *axis_table_for(const std::vector<axis_device_table> &tables,
                                                      const db::device_query &q) noexcept;

} // namespace reducetune
