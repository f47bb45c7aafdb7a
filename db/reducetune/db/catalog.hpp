// The Catalog: the read-only API applications use to pick a variant.
//
// open() reads every status-ok measurement once into memory (one query), keeping only the
// fastest per (device model, type, operator, size); best() is then a map look-up and a binary
// search, with no SQLite call (well under a microsecond; see tuner/tools/bench_catalog.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reducetune/db/records.hpp"
#include "reducetune/db/sqlite.hpp"

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
};

// One device's answers for one type and operator, by ascending size.
struct catalog_table {
  std::string dtype;
  std::string op;
  std::vector<std::uint64_t> sizes; // == entries[i].bucket_n, for nearest_bucket
  std::vector<catalog_entry> entries;
};

struct catalog_device {
  device_record device;
  std::vector<catalog_table> tables;
};

class catalog {
public:
  // Opens the file read-only (it must be a current reducetune file) and loads the fastest
  // selected point per size: flagged points are left out unless the selection allows them.
  [[nodiscard]] static catalog open(const std::filesystem::path &path, point_selection only = {});
  // Loads from an open connection (a store's, for instance).
  [[nodiscard]] static catalog load(const database &db, point_selection only = {});

  // device is a UUID or a device name (a name shared by several models takes the one
  // registered first). Devices of one model (same name, SM count, memory clock) answer
  // together: their measurements are one table, as store::best reads them. The size rule is nearest_bucket: nearest measured size on a log2
  // scale, ties to the larger. Returns nothing when this device, type and operator have no
  // status-ok measurement.
  [[nodiscard]] const catalog_entry *find(std::string_view device, std::string_view dtype,
                                          std::string_view op, std::uint64_t n) const noexcept;
  [[nodiscard]] std::optional<best_choice> best(std::string_view device, std::string_view dtype,
                                                std::string_view op, std::uint64_t n) const;

  [[nodiscard]] const std::vector<catalog_device> &devices() const noexcept { return m_devices; }
  // By UUID or name as find() takes it; nullptr when the file has no such device.
  [[nodiscard]] const catalog_device *device_of(std::string_view device) const noexcept;

private:
  void load_devices(const database &db);

  std::vector<catalog_device> m_devices; // one per model (records.hpp, same_model_sql)
  std::map<std::int64_t, std::size_t> m_index_of_id; // every device id -> its model's entry
  std::map<std::string, std::size_t, std::less<>> m_by_uuid;
  std::map<std::string, std::size_t, std::less<>> m_by_name;
};

} // namespace reducetune::db
