// store::merge_from: another reducetune file's rows copied into this one (store.hpp has the
// conflict rule).
#include "reducetune/db/store.hpp"

#include "reducetune/db/rows.hpp"
#include "reducetune/db/schema.hpp"

#include <map>

namespace reducetune::db {

using namespace detail;

namespace {

// Everything merge_from copies, read before the write transaction (which may be retried).
struct other_file {
  std::map<std::int64_t, device_record> devices;
  std::map<std::int64_t, study_record> studies;
  std::vector<measurement_record> measurements;
  std::vector<build_record> builds;
  std::vector<baseline_record> baselines;
};

void read_baselines(const database &other, std::vector<baseline_record> &out) {
  auto s = other.prepare("SELECT b.device_id, w.dtype, w.op, w.n, w.data_pattern, w.seed, b.kind,"
                         " b.driver_version, b.toolkit_version, b.samples, b.gbps"
                         " FROM rt_baselines b JOIN rt_workloads w ON w.id = b.workload_id");
  while (s.step())
    out.push_back(baseline_record{
        0, s.column_int(0),
        workload_record{0, s.column_text(1), s.column_text(2),
                        static_cast<std::uint64_t>(s.column_int(3)), s.column_text(4),
                        s.column_int(5)},
        s.column_text(6), static_cast<int>(s.column_int(7)), static_cast<int>(s.column_int(8)),
        samples_from(s.column_blob(9)), 0.0, s.column_double(10)});
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
  {
    auto s = other.prepare(std::string(measurement_columns) + "ORDER BY m.id");
    while (s.step())
      f.measurements.push_back(read_measurement(s));
  }
  {
    auto s = other.prepare(std::string(build_select) + "ORDER BY id");
    while (s.step())
      f.builds.push_back(read_build(s));
  }
  read_baselines(other, f.baselines);
  return f;
}

std::map<std::int64_t, std::int64_t> merge_devices(database &db, const other_file &f) {
  std::map<std::int64_t, std::int64_t> ids;
  for (const auto &[other_id, d] : f.devices) {
    auto s = db.prepare("INSERT INTO rt_devices (uuid, name, cc_major, cc_minor, sm_count, l2_bytes,"
                        " bus_width_bits, memory_clock_khz, driver_version, toolkit_version)"
                        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                        " ON CONFLICT (uuid) DO UPDATE SET uuid = uuid RETURNING id");
    s.bind(1, d.uuid).bind(2, d.name).bind(3, d.cc_major).bind(4, d.cc_minor);
    s.bind(5, d.sm_count).bind(6, d.l2_bytes).bind(7, d.bus_width_bits);
    s.bind(8, d.memory_clock_khz).bind(9, d.driver_version).bind(10, d.toolkit_version);
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

} // namespace

// The conflict rule (store.hpp): more samples win; as many, the newer; a full tie keeps ours.
void store::merge_measurement(measurement_record m, merge_stats &stats) {
  const auto variant_id = upsert_variant(m.variant);
  const auto workload_id = upsert_workload(m.workload);
  auto s = m_db.prepare("SELECT sample_count, created_at FROM rt_measurements WHERE device_id = ?1"
                        " AND variant_id = ?2 AND launch_label = ?3 AND workload_id = ?4"
                        " AND template_hash = ?5 AND driver_version = ?6 AND toolkit_version = ?7");
  s.bind(1, m.device_id).bind(2, variant_id).bind(3, m.launch_label).bind(4, workload_id);
  s.bind(5, m.template_hash).bind(6, m.driver_version).bind(7, m.toolkit_version);
  if (!s.step()) {
    write_measurement(m);
    ++stats.inserted;
    return;
  }
  const auto here_count = static_cast<std::size_t>(s.column_int(0));
  const auto here_created = s.column_text(1);
  const bool other_wins = m.samples_s.size() > here_count ||
                          (m.samples_s.size() == here_count && m.created_at > here_created);
  if (other_wins) {
    write_measurement(m);
    ++stats.replaced;
  } else {
    ++stats.kept;
  }
}

std::size_t store::merge_baselines(const std::vector<baseline_record> &baselines,
                                   const std::map<std::int64_t, std::int64_t> &device_ids) {
  std::size_t inserted = 0;
  for (auto b : baselines) {
    b.device_id = device_ids.at(b.device_id);
    const auto stats_b = summarize(b.samples_s);
    const auto workload_id = upsert_workload(b.workload);
    auto s = m_db.prepare(
        "INSERT INTO rt_baselines (device_id, workload_id, kind, driver_version,"
        " toolkit_version, samples, median_s, gbps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        " ON CONFLICT (device_id, workload_id, kind, driver_version, toolkit_version)"
        " DO NOTHING");
    s.bind(1, b.device_id).bind(2, workload_id).bind(3, b.kind).bind(4, b.driver_version);
    s.bind(5, b.toolkit_version).bind_blob(6, sample_bytes(b.samples_s));
    s.bind(7, stats_b ? stats_b->median_s : 0.0).bind(8, b.gbps);
    s.run();
    inserted += static_cast<std::size_t>(sqlite3_changes(m_db.handle()));
  }
  return inserted;
}

merge_stats store::merge_from(const std::filesystem::path &other_path) {
  const other_file other = read_other(other_path);
  merge_stats stats;
  write_transaction(m_db, [&] {
    stats = {};
    const auto device_ids = merge_devices(m_db, other);
    const auto study_ids = merge_studies(m_db, other);
    for (auto m : other.measurements) {
      m.device_id = device_ids.at(m.device_id);
      if (m.study_id)
        m.study_id = study_ids.at(*m.study_id);
      merge_measurement(std::move(m), stats);
    }
    stats.builds_inserted = merge_builds(m_db, other);
    stats.baselines_inserted = merge_baselines(other.baselines, device_ids);
  });
  return stats;
}

} // namespace reducetune::db
