// The Catalog: the read-only API applications use to pick a variant.
//
// open() reads every status-ok measurement once into memory (one query), keeping only the
// fastest per (device model, type, operator, size); best() is then a map look-up and a binary
// search, with no SQLite call (well under a microsecond; see tuner/tools/bench_catalog.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reducetune/db/records.hpp"
#include "reducetune/db/sqlite.hpp"
#include "reducetune/space/problem.hpp"

namespace reducetune::db {

// The fastest variant at one measured size, and the sizes it answers for.
struct catalog_entry {
  std::uint64_t bucket_n = 0; // the measured size
  std::uint64_t min_n = 0;    // smallest n that selects this entry (0 for the first)
  std::int64_t measurement_id = 0;
  variant_record variant; // compile-time parameters, flags and determinism with it
  std::string launch_label;
  std::string launch_parameters_json = "{}";
  std::string lowered_json = "{}"; // {name expression: lowered name}, for this device's arch
  double median_s = 0.0;
  std::optional<double> gbps;
  std::optional<double> pct_of_peak;
  // A lone call's median as an application calls it (`reducetune calibrate`,
  // rt_application_times); nullopt where the point was not calibrated. The axis picks weigh
  // it (db/axis_picks.hpp); the whole array's are decided in application_ranking.hpp.
  std::optional<double> application_s;
};

// One device's answers for one type and operator, by ascending size.
struct catalog_table {
  std::string dtype;
  std::string op;
  std::vector<std::uint64_t> sizes; // == entries[i].bucket_n, for nearest_bucket
  std::vector<catalog_entry> entries;
};

// One device's axis-family answers for one type and operator (issue 26, item 4): per tuned
// shape (outer, r, inner), ordered by shape, every selected status-ok point measured there,
// fastest first (equal medians by labels). All of them, not only the fastest: the fastest
// batch_invariant point of a shape is asked of the search space (db/axis_picks.hpp), which
// the Catalog does not hold. A shape that answers an untuned one: db/shape_rule.hpp.
struct catalog_axis_table {
  std::string dtype;
  std::string op;
  std::vector<reduction_shape> shapes; // == the shapes of ranked, for nearest_shape_index
  std::vector<std::vector<catalog_entry>> ranked; // bucket_n holds r; min_n is unused (0)
};

struct catalog_device {
  device_record device; // the first registered device of the model stands for it
  std::vector<std::string> uuids; // every device of the model, in registration order
  std::vector<catalog_table> tables; // the whole array, (1, n, 1)
  std::vector<catalog_axis_table> axis_tables; // every other shape; empty in most files
};

// How a device finds its answers: the one device-matching rule, followed by the Catalog (find,
// best) and by the exported header's select(), which export_header generates from this table
// (db/README.md, "Matching a device"). For a type and operator, the tables that hold them are
// tried in this order of keys, each key over the models in registration order, and the first
// model that matches answers:
//   1. uuid: the UUID of any device of the model (the device that was tuned, or its twin);
//   2. name: the exact device name (the first model registered with it, when models share a
//      name: another SM count or memory clock);
//   3. compute_capability: the first model of that major * 10 + minor (a GPU never tuned,
//      answered by a relative of its architecture rather than by nothing).
// An empty UUID or name and a compute capability of 0 match nothing. A model matched by a key
// but lacking the type and operator does not stop the search: the next model or key answers.
enum class device_key { uuid, name, compute_capability };
inline constexpr std::array<device_key, 3> device_match_order = {
    device_key::uuid, device_key::name, device_key::compute_capability};

// What an application knows of its device; any part may be empty (0 for the capability).
struct device_query {
  std::string_view uuid;
  std::string_view name;
  int compute_capability = 0;
};

// Whether key k of query q matches model d (the rule above, for one key).
[[nodiscard]] bool device_matches(device_key k, const catalog_device &d,
                                  const device_query &q) noexcept;
// The same for a model known by its name, UUIDs and capability (a table read from an export).
[[nodiscard]] bool device_matches(device_key k, std::string_view name,
                                  std::span<const std::string> uuids, int compute_capability,
                                  const device_query &q) noexcept;

class catalog {
public:
  // Opens the file read-only (it must be a current reducetune file) and loads the fastest
  // selected point per size: flagged points are left out unless the selection allows them.
  [[nodiscard]] static catalog open(const std::filesystem::path &path, point_selection only = {});
  // Loads from an open connection (a store's, for instance).
  [[nodiscard]] static catalog load(const database &db, point_selection only = {});

  // The table of the device `q` describes, by device_match_order (above), and in it the entry
  // for n. Devices of one model (same name, SM count, memory clock) answer together: their
  // measurements are one table, as store::best reads them. The size rule is nearest_bucket:
  // nearest measured size on a log2 scale, ties to the larger. Returns nothing when no device
  // matches with a status-ok measurement of this type and operator.
  [[nodiscard]] const catalog_entry *find(const device_query &q, std::string_view dtype,
                                          std::string_view op, std::uint64_t n) const noexcept;
  [[nodiscard]] const catalog_table *table_for(const device_query &q, std::string_view dtype,
                                               std::string_view op) const noexcept;
  // The axis table of the device `q` describes (device_match_order, as table_for), and the
  // model that holds it; {nullptr, nullptr} when none.
  [[nodiscard]] std::pair<const catalog_device *, const catalog_axis_table *>
  axis_table_for(const device_query &q, std::string_view dtype, std::string_view op) const noexcept;
  // device is a UUID or a device name: find({device, device, 0}, ...).
  [[nodiscard]] const catalog_entry *find(std::string_view device, std::string_view dtype,
                                          std::string_view op, std::uint64_t n) const noexcept;
  [[nodiscard]] std::optional<best_choice> best(std::string_view device, std::string_view dtype,
                                                std::string_view op, std::uint64_t n) const;

  [[nodiscard]] const std::vector<catalog_device> &devices() const noexcept { return m_devices; }
  // By UUID, else by name, in device_match_order, whatever tables the model holds; nullptr
  // when the file has no such device.
  [[nodiscard]] const catalog_device *device_of(std::string_view device) const noexcept;

private:
  void load_devices(const database &db);
  void load_axis_tables(const database &db, const point_selection &only);

  std::vector<catalog_device> m_devices; // one per model (records.hpp, same_model_sql)
  std::map<std::int64_t, std::size_t> m_index_of_id; // every device id -> its model's entry
};

} // namespace reducetune::db
