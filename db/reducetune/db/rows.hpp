// The store's row readers and binders (internal to db/): each table's columns in one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reducetune/db/records.hpp"
#include "reducetune/db/sqlite.hpp"

namespace reducetune::db::detail {

// Samples are stored as a BLOB of little-endian float64.
[[nodiscard]] std::span<const std::byte> sample_bytes(const std::vector<double> &samples);
[[nodiscard]] std::vector<double> samples_from(const std::vector<std::byte> &bytes);

// "SELECT <every measurement column> FROM rt_measurements m JOIN rt_variants v JOIN
// rt_workloads w " (a WHERE or ORDER BY follows), read by read_measurement.
extern const char *const measurement_columns;
[[nodiscard]] measurement_record read_measurement(const statement &s);

// rt_workloads w, matched (find_measurement, find_baseline) and written (upsert_workload):
// "w.dtype = ?F AND w.op = ?F+1 AND ... AND w.inner = ?F+6", its seven values bound by
// bind_workload from ?F on, in that order (dtype, op, n, data_pattern, seed, outer, inner).
[[nodiscard]] std::string workload_matches(int first);
// The columns "w.id, w.dtype, w.op, w.n, w.data_pattern, w.seed, w.outer, w.inner" of a row,
// read from column `first` on (measurement_columns holds them from column 9).
inline constexpr const char *workload_columns =
    "w.id, w.dtype, w.op, w.n, w.data_pattern, w.seed, w.outer, w.inner";
[[nodiscard]] workload_record read_workload(const statement &s, int first);
void bind_workload(statement &s, const workload_record &w, int first = 1);

// rt_devices, read (find_device, devices, merge) and written (register_device, merge).
extern const char *const device_columns;
extern const std::string_view device_insert;
extern const std::string device_upsert; // register_device: a known uuid's row is overwritten
[[nodiscard]] device_record read_device(const statement &s);
void bind_device(statement &s, const device_record &d);

// rt_builds, read (find_build, merge) and written (record_build, merge).
extern const std::string_view build_select;
extern const std::string_view build_insert;
extern const std::string build_upsert; // record_build: a known cache key's row is overwritten
[[nodiscard]] build_record read_build(statement &s);
void bind_build(statement &s, const build_record &b);

// "(SELECT d2.uuid ...)": the model key of the rt_devices row aliased d1, the UUID of its
// model's first registered device (same_model_sql), under which the application candidates
// (application_ranking.cpp) and a merged file's calibrations (store_merge.cpp) are filed.
extern const std::string model_of_d1;
// rt_application_times: "SELECT m2.id ..." the measurements whose times are one calibration
// with measurement ?1's, its workload on its model (same_model_sql): record_application_times
// replaces such a set at once, and merge_from keeps one file's set, never a mix of two.
extern const std::string same_calibration_ids;
// The one writer of rt_application_times rows: measurement ?1's time (?2 the median, ?3 the
// sample count, ?4 created_at: "" or unbound stamps now, a merge keeps the other file's),
// replacing the row it had. It answers the measurement id: no row when there is no ?1.
extern const char *const application_time_upsert;

// Every row of the query s, each read by `read` (read_device, read_build, ...).
template <typename Read> [[nodiscard]] auto read_all(statement s, Read read) {
  std::vector<decltype(read(s))> out;
  while (s.step())
    out.push_back(read(s));
  return out;
}

// The first row of the query sql whose parameter ?1 is key (find_device, find_build), or nothing.
template <typename Read>
[[nodiscard]] auto read_first(const database &db, const std::string &sql, std::string_view key,
                              Read read) {
  auto s = db.prepare(sql);
  s.bind(1, key);
  return s.step() ? std::optional(read(s)) : std::nullopt;
}

// The id of an INSERT ... RETURNING id.
std::int64_t returning_id(statement &s);

// A cached statement, reset (and its read snapshot released) when the caller is done.
class statement_lease {
public:
  explicit statement_lease(statement &s) : m_s(&s) {}
  statement_lease(const statement_lease &) = delete;
  statement_lease &operator=(const statement_lease &) = delete;
  ~statement_lease() { m_s->reset(); }
  statement *operator->() const noexcept { return m_s; }
  statement &operator*() const noexcept { return *m_s; }

private:
  statement *m_s;
};

} // namespace reducetune::db::detail
