// The results store: the read-write API the tuner and the driver use.
//
// Every write is one BEGIN IMMEDIATE transaction that waits for other writers (see
// write_transaction), so several processes may record into one file at the same time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reducetune/db/records.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/sqlite.hpp"

namespace reducetune::db {

// What merge_from did, per measurement of the other file.
struct merge_stats {
  std::size_t inserted = 0; // key not present here: copied
  std::size_t replaced = 0; // same key, the other row won the conflict rule
  std::size_t kept = 0;     // same key, this file's row won
  std::size_t builds_inserted = 0;
  std::size_t baselines_inserted = 0;
  std::size_t baselines_replaced = 0; // same key, the other baseline won the rule
  // The other file's application times (`reducetune calibrate`), taken by calibration (a
  // workload on a model): copied where this file's calibration is older or absent, kept out
  // where this file's is as new or newer.
  std::size_t application_times_copied = 0;
  std::size_t application_times_kept_out = 0;
};

class store {
public:
  // Creates a missing file, migrates an older one (after keeping a copy: migration()), and
  // refuses (store_error, file untouched) a corrupt file, a foreign SQLite file or a newer
  // schema version.
  [[nodiscard]] static store open(const std::filesystem::path &path);
  // For commands that only read: never writes the file (an older one is migrated in a private
  // copy in memory); every write through it fails with store_error.
  [[nodiscard]] static store open_read_only(const std::filesystem::path &path);
  // Set when open() migrated the file.
  [[nodiscard]] const std::optional<migration_note> &migration() const noexcept { return m_migration; }

  [[nodiscard]] const std::filesystem::path &path() const noexcept { return m_db.path(); }
  [[nodiscard]] int schema_version() const;
  [[nodiscard]] database &connection() noexcept { return m_db; }
  // PRAGMA integrity_check: "ok" or SQLite's list of problems.
  [[nodiscard]] std::string integrity_check() const;

  // Inserts or updates (by UUID) a device; returns its id.
  std::int64_t register_device(const device_record &device);
  [[nodiscard]] std::optional<device_record> find_device(std::string_view uuid) const;
  [[nodiscard]] std::vector<device_record> devices() const;

  std::int64_t register_template(std::string_view family, std::string_view content_hash);
  // The id of the study of that name: inserted when new; an existing one (a resumed run) is
  // returned as it is, its device, strategy and config untouched.
  std::int64_t create_study(const study_record &study);

  // Records a compilation (ok or failed) under its cache key; a second record with the same
  // key replaces the first. find_build is the persistent JIT cache's lookup.
  std::int64_t record_build(const build_record &build);
  [[nodiscard]] std::optional<build_record> find_build(std::string_view cache_key) const;

  // Records one measurement with its samples, its variant, workload and template, in one
  // transaction. Statistics are computed from the samples. A measurement whose key is already
  // stored replaces it (the newest run of the same point wins); returns the row id.
  std::int64_t record_measurement(const measurement_record &m);
  // The same for many measurements in one transaction (bulk import, benchmarks).
  void record_measurements(std::span<const measurement_record> ms);
  // What a lone call of measurement `measurement_id`'s point costs an application
  // (`reducetune calibrate`; db/application_ranking.hpp ranks by it), one transaction for
  // all. The times of one calibration replace every earlier time at the same sizes on the
  // same model (times from different runs are never compared). Throws store_error naming an
  // id this file does not hold, writing none of them.
  struct application_time {
    std::int64_t measurement_id = 0;
    double median_s = 0;
    std::int64_t sample_count = 0;
  };
  void record_application_times(std::span<const application_time> times);
  // The measurement of this exact context (any status), if there is one: the tuner asks this
  // before it evaluates a point, and serves the stored row instead.
  [[nodiscard]] std::optional<measurement_record> find_measurement(const measurement_key &key) const;
  [[nodiscard]] bool is_measured(const measurement_key &key) const;

  std::int64_t record_baseline(const baseline_record &b);
  [[nodiscard]] std::optional<baseline_record>
  find_baseline(std::int64_t device_id, const workload_record &w, std::string_view kind) const;

  // The fastest (lowest median; equal medians by labels) status-ok measurement for this
  // device's model (records.hpp, same_model_sql), type and operator at the measured size
  // nearest to n (nearest_bucket: log2 scale, ties to the larger size).
  // Measurements that failed, were invalid or wrong are never candidates, nor are points the
  // selection leaves out (flagged ones by default).
  // These are whole-array answers: only (1, n, 1) workloads are candidates.
  [[nodiscard]] std::optional<best_choice> best(std::int64_t device_id, std::string_view dtype,
                                                std::string_view op, std::uint64_t n,
                                                point_selection only = {}) const;
  // The same for a problem: the whole array as above; any other shape takes the fastest point
  // at the measured shape that answers it by the axis dispatch rule (shape_rule.hpp: the
  // exact shape, else the nearest of its kind, rows and columns apart), among shapes other
  // than the whole array's.
  [[nodiscard]] std::optional<best_choice> best(std::int64_t device_id, const problem &p,
                                                point_selection only = {}) const;

  // Every measurement (any status) for this device, type and operator, optionally of one
  // size (the whole array's (1, n, 1)) or one shape, oldest first.
  [[nodiscard]] std::vector<measurement_record>
  history(std::int64_t device_id, std::string_view dtype, std::string_view op,
          std::optional<std::uint64_t> n = std::nullopt) const;
  [[nodiscard]] std::vector<measurement_record>
  history(std::int64_t device_id, std::string_view dtype, std::string_view op,
          std::optional<reduction_shape> shape) const;

  // Copies another reducetune file's devices, variants, workloads, measurements, builds and
  // baselines into this one, in one transaction. Measurements are deduplicated by their key
  // (device UUID, variant label, launch label, workload, template hash, driver, toolkit).
  // Conflict rule for an identical key (measurements, and baselines by theirs), the better
  // row wins: ok beats not ok (two rows not ok: the newer); then the lower rel_stddev when the
  // two differ by more than max(0.001, 20 % of the larger); then more samples; then the newer
  // created_at; a full tie keeps this file's row (store_merge.cpp, merge_order, says why).
  // Builds already present (same cache key) are kept. Application times come along by
  // calibration (the times of a workload on a model, compared with each other only): the
  // newer calibration replaces the other whole; a tie keeps this file's (store_merge.cpp).
  merge_stats merge_from(const std::filesystem::path &other);

private:
  explicit store(database db) : m_db(std::move(db)) {}
  std::optional<best_choice> best_at(std::int64_t device_id, std::string_view dtype,
                                     std::string_view op, const reduction_shape &wanted,
                                     point_selection only) const;
  std::int64_t upsert_variant(const variant_record &v);
  std::int64_t upsert_workload(const workload_record &w);
  std::int64_t write_measurement(const measurement_record &m);
  // The id of the key's row here after the merge (inserted, replaced or kept).
  std::int64_t merge_measurement(measurement_record m, merge_stats &stats);
  void merge_baseline(const baseline_record &b, std::string_view created_at, merge_stats &stats);
  // The one writer of rt_baselines rows: inserts b or replaces the row of its key; an empty
  // created_at stamps now (a recording), another keeps that time (a merged row). Its id.
  std::int64_t write_baseline(const baseline_record &b, std::int64_t workload_id,
                              double median_s, std::string_view created_at);

  // Prepared once per store and reused (reset) by the hot paths; keyed by the SQL constant.
  statement &cached(const char *sql) const;

  database m_db;
  std::optional<migration_note> m_migration;
  mutable std::unordered_map<const char *, statement> m_statements;
};

} // namespace reducetune::db
