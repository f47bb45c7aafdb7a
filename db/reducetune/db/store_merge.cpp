// store::merge_from: another reducetune file's rows copied into this one; a key present in
// both keeps the better measurement (merge_order below, stated in store.hpp and db/README.md).
#include "reducetune/db/store.hpp"

#include "reducetune/db/rows.hpp"
#include "reducetune/db/schema.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace reducetune::db {

using namespace detail;

namespace {

// One application time of the other file (`reducetune calibrate`), by its measurement there.
struct calibration_time {
  std::int64_t measurement_id = 0;
  double median_s = 0;
  std::int64_t sample_count = 0;
  std::string created_at;
};

// The other file's application times by calibration: (workload id, model) -> its times. The
// times of one calibration are compared with each other only (record_application_times drops
// a workload's earlier times on the model before it records), so a merge takes or leaves a
// calibration whole.
using calibrations =
    std::map<std::pair<std::int64_t, std::string>, std::vector<calibration_time>>;

// Everything merge_from copies, read before the write transaction (which may be retried).
struct other_file {
  std::map<std::int64_t, device_record> devices;
  std::map<std::int64_t, study_record> studies;
  std::vector<measurement_record> measurements;
  std::vector<build_record> builds;
  std::vector<std::pair<baseline_record, std::string>> baselines; // with its created_at
  calibrations application_times;
};

void read_baselines(const database &other,
                    std::vector<std::pair<baseline_record, std::string>> &out) {
  auto s = other.prepare(std::string("SELECT b.device_id, b.kind, b.driver_version,"
                                     " b.toolkit_version, b.samples, b.gbps, b.created_at, ") +
                         workload_columns +
                         " FROM rt_baselines b JOIN rt_workloads w ON w.id = b.workload_id");
  while (s.step()) {
    baseline_record b;
    b.device_id = s.column_int(0);
    b.kind = s.column_text(1);
    b.driver_version = static_cast<int>(s.column_int(2));
    b.toolkit_version = static_cast<int>(s.column_int(3));
    b.samples_s = samples_from(s.column_blob(4));
    b.gbps = s.column_double(5);
    b.workload = read_workload(s, 7);
    b.workload.id = 0; // another file's id
    out.emplace_back(std::move(b), s.column_text(6));
  }
}

// A file older than schema 5 has no rt_application_times of its own: open_for_reading migrated
// it in memory, so the table is there, empty.
calibrations read_calibrations(const database &other) {
  auto s = other.prepare(
      "SELECT a.measurement_id, a.median_s, a.sample_count, a.created_at, m.workload_id, " +
      model_of_d1 +
      " FROM rt_application_times a JOIN rt_measurements m"
      " ON m.id = a.measurement_id JOIN rt_devices d1 ON d1.id = m.device_id"
      " ORDER BY a.measurement_id");
  calibrations out;
  while (s.step())
    out[{s.column_int(4), s.column_text(5)}].push_back(
        {s.column_int(0), s.column_double(1), s.column_int(2), s.column_text(3)});
  return out;
}

other_file read_other(const std::filesystem::path &path) {
  const auto other = open_for_reading(path);
  other_file f;
  {
    auto s = other.prepare(std::string(device_columns));
    while (s.step()) {
      auto d = read_device(s);
      f.devices.emplace(d.id, d);
    }
  }
  {
    auto s = other.prepare("SELECT id, name, dtype, op, strategy, config FROM rt_studies");
    while (s.step())
      f.studies.emplace(s.column_int(0),
                        study_record{0, s.column_text(1), std::nullopt, s.column_text(2),
                                     s.column_text(3), s.column_text(4), s.column_text(5)});
  }
  f.measurements =
      read_all(other.prepare(std::string(measurement_columns) + "ORDER BY m.id"), read_measurement);
  f.builds = read_all(other.prepare(std::string(build_select) + "ORDER BY id"), read_build);
  read_baselines(other, f.baselines);
  f.application_times = read_calibrations(other);
  return f;
}

std::map<std::int64_t, std::int64_t> merge_devices(database &db, const other_file &f) {
  std::map<std::int64_t, std::int64_t> ids;
  for (const auto &[other_id, d] : f.devices) {
    auto s = db.prepare(std::string(device_insert) +
                        " ON CONFLICT (uuid) DO UPDATE SET uuid = uuid RETURNING id");
    bind_device(s, d);
    ids[other_id] = returning_id(s);
  }
  return ids;
}

std::map<std::int64_t, std::int64_t> merge_studies(database &db, const other_file &f) {
  std::map<std::int64_t, std::int64_t> ids;
  for (const auto &[other_id, st] : f.studies) {
    auto s = db.prepare("INSERT INTO rt_studies (name, dtype, op, strategy, config)"
                        " VALUES (?1, ?2, ?3, ?4, ?5)"
                        " ON CONFLICT (name) DO UPDATE SET name = name RETURNING id");
    s.bind(1, st.name).bind(2, st.dtype).bind(3, st.op).bind(4, st.strategy);
    s.bind(5, st.config_json);
    ids[other_id] = returning_id(s);
  }
  return ids;
}

std::size_t merge_builds(database &db, const other_file &f) {
  std::size_t inserted = 0;
  for (const auto &b : f.builds) {
    auto s = db.prepare(std::string(build_insert) + " ON CONFLICT (cache_key) DO NOTHING");
    bind_build(s, b);
    s.run();
    inserted += static_cast<std::size_t>(sqlite3_changes(db.handle()));
  }
  return inserted;
}

// What the merge rule weighs in a row: measurements and baselines alike (a baseline is always
// ok: only measured baselines are stored).
struct merit {
  bool ok = true;
  std::optional<double> spread; // rel_stddev of the samples; none below 2 samples
  std::size_t samples = 0;
  std::string_view created_at;
  bool full = true; // not cut short by racing (an "outpaced" row)
};

// The reason an ok row cut short by racing starts with (issue 25): the stopping rule's
// stop_reason::outpaced (measure/stopping_rule.cpp), written by the driver's evaluator
// (evaluate/base.py OUTPACED). The store is below the measure layer: the text is the contract.
constexpr std::string_view outpaced_reason = "outpaced";

merit merit_of(const measurement_record &m) {
  const auto st = summarize(m.samples_s);
  return {m.status == measurement_status::ok,
          st && st->count > 1 ? std::optional(st->rel_stddev) : std::nullopt,
          m.samples_s.size(), m.created_at, !m.reason.starts_with(outpaced_reason)};
}

merit merit_of(const std::vector<double> &samples, std::string_view created_at) {
  const auto st = summarize(samples);
  return {true, st && st->count > 1 ? std::optional(st->rel_stddev) : std::nullopt,
          samples.size(), created_at};
}

// The merge rule: > 0 when a is the better measurement of one key, < 0 when b is, 0 on a full
// tie. A point stops sampling once its noise is at most 1 % (stopping_rule.hpp), so a row with
// many samples is usually one that never got quiet (it ran into the time cap): "more samples
// wins" kept the noisier row. Better, in order:
//  1. ok beats failed, invalid or wrong (only an ok row has a time). Two rows that are not ok
//     carry no timing to weigh: the newer wins. Of two ok rows, a full measurement beats one
//     cut short by racing ("outpaced": 3 samples, whose spread says little).
//  2. the lower spread (rel_stddev), when the two differ by more than
//     max(0.1 percentage point, 20 % of the larger). The margin is the uncertainty of a spread
//     estimated from tens of samples (its relative standard error is about 1/sqrt(2(n-1)),
//     16 % at 20 samples), and differences below 0.1 point are far under the 1 % stopping
//     threshold; within it the spreads are the same and the sample count decides. A row with
//     fewer than 2 samples has no spread and loses to one that has.
//  3. more samples; 4. the newer created_at (ISO 8601 UTC text: orders as time).
// The rule depends only on the two rows, not on which file they came from, so merging A into B
// and B into A keeps the same row.
int merge_order(const merit &a, const merit &b) {
  if (a.ok != b.ok)
    return a.ok ? 1 : -1;
  if (a.ok) {
    if (a.full != b.full)
      return a.full ? 1 : -1;
    if (a.spread.has_value() != b.spread.has_value())
      return a.spread ? 1 : -1;
    if (a.spread) {
      const double margin = std::max(0.001, 0.2 * std::max(*a.spread, *b.spread));
      if (std::abs(*a.spread - *b.spread) > margin)
        return *a.spread < *b.spread ? 1 : -1;
    }
    if (a.samples != b.samples)
      return a.samples > b.samples ? 1 : -1;
  }
  const int newer = a.created_at.compare(b.created_at);
  return newer > 0 ? 1 : newer < 0 ? -1 : 0;
}

// The newest created_at of this file's calibration that holds measurement `id` ("" where that
// workload has no times on that model).
std::string newest_time_of(database &db, std::int64_t id) {
  auto q = db.prepare("SELECT COALESCE(max(created_at), '') FROM rt_application_times"
                      " WHERE measurement_id IN (" + same_calibration_ids + ")");
  q.bind(1, id);
  return q.step() ? q.column_text(0) : std::string(); // an aggregate: always one row
}

// One calibration of the other file, its measurement ids mapped to this file's rows of their
// keys (`ids`). It replaces this file's calibration of that workload and model when it is the
// newer (created_at, ISO 8601 UTC text: orders as time), as a later `reducetune calibrate`
// would; the rule weighs only the two calibrations, so merging A into B and B into A keep the
// same times. A tie (the same calibration merged again) keeps this file's: nothing is written.
// Each row keeps its created_at, so that a later merge weighs the same calibration.
void merge_calibration(database &db, const std::vector<calibration_time> &times,
                       const std::map<std::int64_t, std::int64_t> &ids, merge_stats &stats) {
  const auto first_here = ids.at(times.front().measurement_id);
  std::string newest;
  for (const auto &t : times)
    newest = std::max(newest, t.created_at);
  if (newest <= newest_time_of(db, first_here)) {
    stats.application_times_kept_out += times.size();
    return;
  }
  auto drop = db.prepare("DELETE FROM rt_application_times WHERE measurement_id IN (" +
                         same_calibration_ids + ")");
  drop.bind(1, first_here).run();
  // An upsert: a device this file already held under the uuid may file a time under another
  // model than the other file did, outside the calibration dropped above.
  auto put = db.prepare(application_time_upsert);
  for (const auto &t : times) {
    put.bind(1, ids.at(t.measurement_id)).bind(2, t.median_s).bind(3, t.sample_count);
    put.bind(4, t.created_at).run();
  }
  stats.application_times_copied += times.size();
}

} // namespace

// The other file's row replaces this file's only when merge_order prefers it; a full tie keeps
// this file's row, so merging the same file twice changes nothing.
std::int64_t store::merge_measurement(measurement_record m, merge_stats &stats) {
  const auto variant_id = upsert_variant(m.variant);
  const auto workload_id = upsert_workload(m.workload);
  auto s = m_db.prepare(std::string(measurement_columns) +
                        "WHERE m.device_id = ?1 AND m.variant_id = ?2 AND m.launch_label = ?3"
                        " AND m.workload_id = ?4 AND m.template_hash = ?5"
                        " AND m.driver_version = ?6 AND m.toolkit_version = ?7");
  s.bind(1, m.device_id).bind(2, variant_id).bind(3, m.launch_label).bind(4, workload_id);
  s.bind(5, m.template_hash).bind(6, m.driver_version).bind(7, m.toolkit_version);
  if (!s.step()) {
    ++stats.inserted;
    return write_measurement(m);
  }
  const auto here = read_measurement(s);
  if (merge_order(merit_of(m), merit_of(here)) > 0) {
    ++stats.replaced;
    return write_measurement(m); // an update of the key's row: its id (and times) stay
  }
  ++stats.kept;
  return here.id;
}

// Baselines (CUB, the streaming ceiling) conflict the same way and follow the same rule; the
// winner keeps its own created_at, so that a later merge weighs the same row.
void store::merge_baseline(const baseline_record &b, std::string_view created_at,
                           merge_stats &stats) {
  const auto workload_id = upsert_workload(b.workload);
  auto q = m_db.prepare("SELECT samples, created_at FROM rt_baselines WHERE device_id = ?1"
                        " AND workload_id = ?2 AND kind = ?3 AND driver_version = ?4"
                        " AND toolkit_version = ?5");
  q.bind(1, b.device_id).bind(2, workload_id).bind(3, b.kind).bind(4, b.driver_version);
  q.bind(5, b.toolkit_version);
  const bool present = q.step();
  if (present) {
    const auto here_samples = samples_from(q.column_blob(0));
    const auto here_created = q.column_text(1);
    if (merge_order(merit_of(b.samples_s, created_at), merit_of(here_samples, here_created)) <= 0)
      return;
  }
  const auto stats_b = summarize(b.samples_s);
  write_baseline(b, workload_id, stats_b ? stats_b->median_s : 0.0, created_at);
  ++(present ? stats.baselines_replaced : stats.baselines_inserted);
}

merge_stats store::merge_from(const std::filesystem::path &other_path) {
  // The same file by device and inode (./a.db, a symlink, a hard link): its rows are this
  // file's rows, and reading it beside this connection's writes is no merge.
  std::error_code ec;
  if (std::filesystem::equivalent(m_db.path(), other_path, ec))
    throw store_error("cannot merge '" + other_path.string() + "' into '" + m_db.path().string() +
                      "': they are the same file. Pass another database to merge.");
  const other_file other = read_other(other_path);
  merge_stats stats;
  write_transaction(m_db, [&] {
    stats = {};
    const auto device_ids = merge_devices(m_db, other);
    const auto study_ids = merge_studies(m_db, other);
    std::map<std::int64_t, std::int64_t> measurement_ids; // the other file's -> this file's
    for (auto m : other.measurements) {
      m.device_id = device_ids.at(m.device_id);
      if (m.study_id)
        m.study_id = study_ids.at(*m.study_id);
      const auto other_id = m.id;
      measurement_ids[other_id] = merge_measurement(std::move(m), stats);
    }
    for (const auto &[calibration, times] : other.application_times)
      merge_calibration(m_db, times, measurement_ids, stats);
    stats.builds_inserted = merge_builds(m_db, other);
    for (auto [b, created_at] : other.baselines) {
      b.device_id = device_ids.at(b.device_id);
      merge_baseline(b, created_at, stats);
    }
  });
  return stats;
}

} // namespace reducetune::db
