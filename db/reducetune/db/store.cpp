#include "reducetune/db/store.hpp"

#include "reducetune/db/rows.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/shape_rule.hpp"

namespace reducetune::db {

using namespace detail;

namespace {
// An INSERT ... RETURNING id in a write transaction of its own; bind(s) binds its values.
template <typename Bind>
std::int64_t insert_returning_id(database &db, const std::string &sql, Bind bind) {
  std::int64_t id = 0;
  write_transaction(db, [&] {
    auto s = db.prepare(sql);
    bind(s);
    id = returning_id(s);
  });
  return id;
}
} // namespace

statement &store::cached(const char *sql) const {
  auto it = m_statements.find(sql);
  if (it == m_statements.end())
    it = m_statements.emplace(sql, m_db.prepare(sql)).first;
  it->second.reset();
  return it->second;
}

store store::open(const std::filesystem::path &path) {
  migration_note note;
  store s(open_for_writing(path, &note));
  if (note.from_version != 0)
    s.m_migration = note;
  return s;
}

store store::open_read_only(const std::filesystem::path &path) {
  return store(open_for_reading(path));
}

int store::schema_version() const {
  return static_cast<int>(m_db.pragma_int("user_version"));
}

std::string store::integrity_check() const {
  auto s = m_db.prepare("PRAGMA integrity_check");
  std::string out;
  while (s.step())
    out += (out.empty() ? "" : "\n") + s.column_text(0);
  return out;
}

std::int64_t store::register_device(const device_record &d) {
  return insert_returning_id(m_db, device_upsert, [&](statement &s) { bind_device(s, d); });
}

std::optional<device_record> store::find_device(std::string_view uuid) const {
  return read_first(m_db, std::string(device_columns) + "WHERE uuid = ?1", uuid, read_device);
}

std::vector<device_record> store::devices() const {
  return read_all(m_db.prepare(std::string(device_columns) + "ORDER BY id"), read_device);
}

std::int64_t store::register_template(std::string_view family, std::string_view content_hash) {
  return insert_returning_id(m_db,
                             "INSERT INTO rt_templates (family, content_hash) VALUES (?1, ?2)"
                             " ON CONFLICT (family, content_hash) DO UPDATE SET family = family"
                             " RETURNING id",
                             [&](statement &s) { s.bind(1, family).bind(2, content_hash); });
}

std::int64_t store::create_study(const study_record &st) {
  // the no-op update makes RETURNING give the existing row's id
  return insert_returning_id(
      m_db,
      "INSERT INTO rt_studies (name, device_id, dtype, op, strategy, config)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
      " ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
      [&](statement &s) {
        s.bind(1, st.name).bind(2, st.device_id).bind(3, st.dtype).bind(4, st.op);
        s.bind(5, st.strategy).bind(6, st.config_json);
      });
}

std::int64_t store::record_build(const build_record &b) {
  return insert_returning_id(m_db, build_upsert, [&](statement &s) { bind_build(s, b); });
}

std::optional<build_record> store::find_build(std::string_view cache_key) const {
  return read_first(m_db, std::string(build_select) + "WHERE cache_key = ?1", cache_key,
                    read_build);
}

std::int64_t store::upsert_variant(const variant_record &v) {
  // A label names one variant: a stored row keeps its facts (they came from the same label),
  // unless they were unknown (its family was missing when the file was repaired).
  statement_lease s(cached(
      "INSERT INTO rt_variants (family, dtype, op, label, parameters, flags, determinism)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
      " ON CONFLICT (label) DO UPDATE SET"
      " parameters = iif(determinism = 'unknown', excluded.parameters, parameters),"
      " flags = iif(determinism = 'unknown', excluded.flags, flags),"
      " determinism = iif(determinism = 'unknown', excluded.determinism, determinism)"
      " RETURNING id"));
  s->bind(1, v.family).bind(2, v.dtype).bind(3, v.op).bind(4, v.label).bind(5, v.parameters_json);
  s->bind(6, v.flags_json).bind(7, v.determinism);
  return returning_id(*s);
}

std::int64_t store::upsert_workload(const workload_record &w) {
  if (w.n == 0 || w.outer == 0 || w.inner == 0)
    throw store_error("a workload needs every extent of its shape (outer, r, inner) > 0");
  statement_lease s(cached(
      "INSERT INTO rt_workloads (dtype, op, n, data_pattern, seed, outer, inner)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
      " ON CONFLICT (dtype, op, outer, n, inner, data_pattern, seed) DO UPDATE SET seed = seed"
      " RETURNING id"));
  bind_workload(*s, w);
  return returning_id(*s);
}

std::int64_t store::write_measurement(const measurement_record &m) {
  const auto variant_id = upsert_variant(m.variant);
  const auto workload_id = upsert_workload(m.workload);
  {
    statement_lease t(cached("INSERT INTO rt_templates (family, content_hash) VALUES (?1, ?2)"
                             " ON CONFLICT (family, content_hash) DO NOTHING"));
    t->bind(1, m.variant.family).bind(2, m.template_hash).run();
  }
  const auto stats = summarize(m.samples_s);
  statement_lease s(cached(
      "INSERT INTO rt_measurements (device_id, variant_id, launch_label, workload_id,"
      " template_hash, driver_version, toolkit_version, study_id, samples, sample_count,"
      " median_s, min_s, mean_s, rel_stddev, gbps, pct_of_peak, pct_of_ceiling, status, reason,"
      " created_at, launch_parameters)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
      " ?19, COALESCE(NULLIF(?20, ''), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), ?21)"
      " ON CONFLICT (device_id, variant_id, launch_label, workload_id, template_hash,"
      " driver_version, toolkit_version) DO UPDATE SET study_id = excluded.study_id,"
      " samples = excluded.samples, sample_count = excluded.sample_count,"
      " median_s = excluded.median_s, min_s = excluded.min_s, mean_s = excluded.mean_s,"
      " rel_stddev = excluded.rel_stddev, gbps = excluded.gbps,"
      " pct_of_peak = excluded.pct_of_peak, pct_of_ceiling = excluded.pct_of_ceiling,"
      " status = excluded.status, reason = excluded.reason, created_at = excluded.created_at"
      " RETURNING id"));
  s->bind(1, m.device_id).bind(2, variant_id).bind(3, m.launch_label).bind(4, workload_id);
  s->bind(5, m.template_hash).bind(6, m.driver_version).bind(7, m.toolkit_version);
  s->bind(8, m.study_id).bind_blob(9, sample_bytes(m.samples_s));
  s->bind(10, static_cast<std::int64_t>(m.samples_s.size()));
  s->bind(11, stats ? std::optional(stats->median_s) : std::nullopt);
  s->bind(12, stats ? std::optional(stats->min_s) : std::nullopt);
  s->bind(13, stats ? std::optional(stats->mean_s) : std::nullopt);
  s->bind(14, stats ? std::optional(stats->rel_stddev) : std::nullopt);
  s->bind(15, m.gbps).bind(16, m.pct_of_peak).bind(17, m.pct_of_ceiling);
  s->bind(18, to_string(m.status)).bind(19, m.reason).bind(20, m.created_at);
  s->bind(21, m.launch_parameters_json);
  return returning_id(*s);
}

std::int64_t store::record_measurement(const measurement_record &m) {
  std::int64_t id = 0;
  write_transaction(m_db, [&] { id = write_measurement(m); });
  return id;
}

void store::record_measurements(std::span<const measurement_record> ms) {
  write_transaction(m_db, [&] {
    for (const auto &m : ms)
      write_measurement(m);
  });
}

void store::record_application_times(std::span<const application_time> times) {
  write_transaction(m_db, [&] {
    // One calibration's times are compared with each other only: what an earlier run measured
    // at these sizes on this model (another GPU, another day) is dropped first.
    auto drop = m_db.prepare("DELETE FROM rt_application_times WHERE measurement_id IN (" +
                             same_calibration_ids + ")");
    for (const auto &t : times) {
      drop.reset();
      drop.bind(1, t.measurement_id);
      drop.run();
    }
    auto q = m_db.prepare(application_time_upsert); // ?4 unbound: stamped now
    for (const auto &t : times) {
      if (!(t.median_s > 0) || t.sample_count <= 0)
        throw store_error("an application time needs a median > 0 and samples > 0 (measurement " +
                          std::to_string(t.measurement_id) + ")");
      q.reset();
      q.bind(1, t.measurement_id).bind(2, t.median_s).bind(3, t.sample_count);
      if (!q.step())
        throw store_error("no measurement " + std::to_string(t.measurement_id) + " in " +
                          m_db.path().string() + ": its application time is not recorded");
      while (q.step()) {
      }
    }
  });
}

std::optional<measurement_record> store::find_measurement(const measurement_key &k) const {
  // Any status counts: a point that failed or was wrong is data, not a reason to retry.
  static const std::string sql =
      std::string(measurement_columns) +
      "WHERE m.device_id = ?1 AND v.label = ?2 AND m.launch_label = ?3 AND m.template_hash = ?4"
      " AND m.driver_version = ?5 AND m.toolkit_version = ?6 AND " + workload_matches(7);
  statement_lease s(cached(sql.c_str()));
  s->bind(1, k.device_id).bind(2, k.variant_label).bind(3, k.launch_label);
  s->bind(4, k.template_hash).bind(5, k.driver_version).bind(6, k.toolkit_version);
  bind_workload(*s, k.workload, 7);
  if (!s->step())
    return std::nullopt;
  return read_measurement(*s);
}

bool store::is_measured(const measurement_key &k) const {
  return find_measurement(k).has_value();
}

std::int64_t store::record_baseline(const baseline_record &b) {
  const auto stats = summarize(b.samples_s);
  if (!stats)
    throw store_error("a baseline needs at least one sample");
  std::int64_t id = 0;
  write_transaction(m_db, [&] {
    id = write_baseline(b, upsert_workload(b.workload), stats->median_s, "");
  });
  return id;
}

std::int64_t store::write_baseline(const baseline_record &b, std::int64_t workload_id,
                                   double median_s, std::string_view created_at) {
  auto s = m_db.prepare(
      "INSERT INTO rt_baselines (device_id, workload_id, kind, driver_version, toolkit_version,"
      " samples, median_s, gbps, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
      " COALESCE(NULLIF(?9, ''), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))"
      " ON CONFLICT (device_id, workload_id, kind, driver_version, toolkit_version)"
      " DO UPDATE SET samples = excluded.samples, median_s = excluded.median_s,"
      " gbps = excluded.gbps, created_at = excluded.created_at RETURNING id");
  s.bind(1, b.device_id).bind(2, workload_id).bind(3, b.kind).bind(4, b.driver_version);
  s.bind(5, b.toolkit_version).bind_blob(6, sample_bytes(b.samples_s));
  s.bind(7, median_s).bind(8, b.gbps).bind(9, created_at);
  return returning_id(s);
}

std::optional<baseline_record> store::find_baseline(std::int64_t device_id,
                                                    const workload_record &w,
                                                    std::string_view kind) const {
  auto s = m_db.prepare(
      std::string("SELECT b.id, b.driver_version, b.toolkit_version, b.samples, b.median_s,"
                  " b.gbps, w.id")+
      " FROM rt_baselines b JOIN rt_workloads w ON w.id = b.workload_id"
      " WHERE b.device_id = ?1 AND b.kind = ?2 AND " + workload_matches(3) +
      " ORDER BY b.created_at DESC, b.id DESC LIMIT 1");
  s.bind(1, device_id).bind(2, kind);
  bind_workload(s, w, 3);
  if (!s.step())
    return std::nullopt;
  baseline_record b;
  b.id = s.column_int(0);
  b.device_id = device_id;
  b.workload = w;
  b.workload.id = s.column_int(6);
  b.kind = std::string(kind);
  b.driver_version = static_cast<int>(s.column_int(1));
  b.toolkit_version = static_cast<int>(s.column_int(2));
  b.samples_s = samples_from(s.column_blob(3));
  b.median_s = s.column_double(4);
  b.gbps = s.column_double(5);
  return b;
}

namespace {

// The ids of the devices of ?1's model (same_model_sql).
std::string model_ids_sql() {
  return std::string("(SELECT d2.id FROM rt_devices d1 JOIN rt_devices d2 ON ") +
         same_model_sql + " WHERE d1.id = ?1)";
}

} // namespace

namespace {

// The measured shapes (outer, r, inner) of ?2's type and ?3's operator on ?1's model that
// hold a candidate of the selection (?4 flagged allowed, ?5 deterministic only): the whole
// array's (1, n, 1) when ?6, every other shape when not. Workload first (its UNIQUE index
// starts with dtype, op), then rt_measurements_by_workload: index pages, not the samples.
std::string measured_shapes_sql() {
  return "SELECT DISTINCT w.outer, w.n, w.inner FROM rt_workloads w WHERE w.dtype = ?2"
         " AND w.op = ?3 AND ((w.outer = 1 AND w.inner = 1) = (?6 <> 0))"
         " AND EXISTS (SELECT 1 FROM rt_measurements m JOIN rt_variants v"
         " ON v.id = m.variant_id WHERE m.device_id IN " +
         model_ids_sql() +
         " AND m.workload_id = w.id AND m.status = 'ok' AND m.median_s IS NOT NULL"
         " AND (?4 OR v.flags = '[]') AND (NOT ?5 OR v.determinism = 'run_to_run'))"
         " ORDER BY w.n, w.outer, w.inner";
}

} // namespace

std::optional<best_choice> store::best(std::int64_t device_id, std::string_view dtype,
                                       std::string_view op, std::uint64_t n,
                                       point_selection only) const {
  return best_at(device_id, dtype, op, {1, n, 1}, only);
}

std::optional<best_choice> store::best(std::int64_t device_id, const problem &p,
                                       point_selection only) const {
  validate(p);
  return best_at(device_id, to_string(p.type), to_string(p.op), p.shape, only);
}

std::optional<best_choice> store::best_at(std::int64_t device_id, std::string_view dtype,
                                          std::string_view op, const reduction_shape &wanted,
                                          point_selection only) const {
  const bool whole = wanted.outer == 1 && wanted.inner == 1;
  std::vector<reduction_shape> shapes;
  {
    static const std::string sql = measured_shapes_sql();
    statement_lease s(cached(sql.c_str()));
    s->bind(1, device_id).bind(2, dtype).bind(3, op);
    s->bind(4, only.allow_flagged ? 1 : 0).bind(5, only.deterministic_only ? 1 : 0);
    s->bind(6, whole ? 1 : 0);
    while (s->step())
      shapes.push_back({static_cast<std::uint64_t>(s->column_int(0)),
                        static_cast<std::uint64_t>(s->column_int(1)),
                        static_cast<std::uint64_t>(s->column_int(2))});
  }
  // The whole array keeps its size rule (nearest_bucket), other shapes take the axis
  // dispatch rule (shape_rule.hpp): both shared with the Catalog, the runtime and the header.
  std::vector<std::uint64_t> sizes;
  for (const auto &shape : shapes)
    sizes.push_back(shape.r);
  const auto bucket =
      whole ? nearest_bucket(sizes, wanted.r) : nearest_shape_index(shapes, wanted);
  if (!bucket)
    return std::nullopt;
  const reduction_shape &at = shapes[*bucket];
  static const std::string best_sql =
      std::string(measurement_columns) +
      "WHERE m.id = (SELECT m2.id FROM rt_workloads w2 CROSS JOIN rt_measurements m2"
      " JOIN rt_variants v2 ON v2.id = m2.variant_id"
      " WHERE w2.dtype = ?2 AND w2.op = ?3 AND w2.n = ?4 AND w2.outer = ?7 AND w2.inner = ?8"
      " AND m2.device_id IN " +
      model_ids_sql() +
      " AND m2.workload_id = w2.id AND m2.status = 'ok' AND m2.median_s IS NOT NULL"
      " AND (?5 OR v2.flags = '[]') AND (NOT ?6 OR v2.determinism = 'run_to_run')"
      " ORDER BY m2.median_s, v2.label, m2.launch_label, m2.id LIMIT 1)"; // as the Catalog
  statement_lease s(cached(best_sql.c_str()));
  s->bind(1, device_id).bind(2, dtype).bind(3, op);
  s->bind(4, static_cast<std::int64_t>(at.r));
  s->bind(5, only.allow_flagged ? 1 : 0).bind(6, only.deterministic_only ? 1 : 0);
  s->bind(7, static_cast<std::int64_t>(at.outer)).bind(8, static_cast<std::int64_t>(at.inner));
  if (!s->step())
    return std::nullopt;
  const auto m = read_measurement(*s);
  best_choice b{m.id,           wanted.r, at.r,   m.variant,    m.launch_label,
                m.launch_parameters_json, m.stats->median_s, m.gbps, m.pct_of_peak};
  b.bucket_outer = at.outer;
  b.bucket_inner = at.inner;
  return b;
}

std::vector<measurement_record> store::history(std::int64_t device_id, std::string_view dtype,
                                               std::string_view op,
                                               std::optional<std::uint64_t> n) const {
  return history(device_id, dtype, op,
                 n ? std::optional<reduction_shape>({1, *n, 1}) : std::nullopt);
}

std::vector<measurement_record> store::history(std::int64_t device_id, std::string_view dtype,
                                               std::string_view op,
                                               std::optional<reduction_shape> shape) const {
  auto s = m_db.prepare(std::string(measurement_columns) +
                        "WHERE m.device_id = ?1 AND w.dtype = ?2 AND w.op = ?3"
                        " AND (?4 IS NULL OR (w.outer = ?4 AND w.n = ?5 AND w.inner = ?6))"
                        " ORDER BY m.created_at, m.id");
  s.bind(1, device_id).bind(2, dtype).bind(3, op);
  const auto extent = [&](std::uint64_t reduction_shape::*e) {
    return shape ? std::optional(static_cast<std::int64_t>((*shape).*e)) : std::nullopt;
  };
  s.bind(4, extent(&reduction_shape::outer)).bind(5, extent(&reduction_shape::r));
  s.bind(6, extent(&reduction_shape::inner));
  return read_all(std::move(s), read_measurement);
}

} // namespace reducetune::db
