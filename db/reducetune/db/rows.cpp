// Reading and binding the store's rows: one place for each table's columns, shared by the
// store's queries, best, history and merge.
#include "reducetune/db/rows.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <initializer_list>
#include <string>

namespace reducetune::db::detail {


namespace {
// "c1 = excluded.c1, c2 = excluded.c2, ...": an upsert that overwrites each column named.
std::string set_from_excluded(std::initializer_list<std::string_view> columns) {
  std::string out;
  for (const auto c : columns)
    out.append(out.empty() ? "" : ", ").append(c).append(" = excluded.").append(c);
  return out;
}
} // namespace

static_assert(std::endian::native == std::endian::little,
              "samples are stored as little-endian float64; add a byte swap for this host");

std::span<const std::byte> sample_bytes(const std::vector<double> &samples) {
  return std::as_bytes(std::span<const double>(samples));
}

std::vector<double> samples_from(const std::vector<std::byte> &bytes) {
  std::vector<double> out(bytes.size() / sizeof(double));
  if (!out.empty())
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

const char *const measurement_columns =
    "SELECT m.id, m.device_id, v.id, v.family, v.dtype, v.op, v.label, v.parameters,"
    " m.launch_label, w.id, w.dtype, w.op, w.n, w.data_pattern, w.seed, w.outer, w.inner,"
    " m.template_hash,"
    " m.driver_version, m.toolkit_version, m.study_id, m.samples, m.gbps, m.pct_of_peak,"
    " m.pct_of_ceiling, m.status, m.reason, m.created_at, v.flags, v.determinism,"
    " m.launch_parameters"
    " FROM rt_measurements m JOIN rt_variants v ON v.id = m.variant_id"
    " JOIN rt_workloads w ON w.id = m.workload_id ";

measurement_record read_measurement(const statement &s) {
  measurement_record m;
  m.id = s.column_int(0);
  m.device_id = s.column_int(1);
  m.variant = {s.column_int(2),  s.column_text(3),  s.column_text(4),  s.column_text(5),
               s.column_text(6), s.column_text(7), s.column_text(28), s.column_text(29)};
  m.launch_label = s.column_text(8);
  m.workload = read_workload(s, 9);
  m.template_hash = s.column_text(17);
  m.driver_version = static_cast<int>(s.column_int(18));
  m.toolkit_version = static_cast<int>(s.column_int(19));
  m.study_id = s.column_optional_int(20);
  m.samples_s = samples_from(s.column_blob(21));
  m.stats = summarize(m.samples_s);
  m.gbps = s.column_optional_double(22);
  m.pct_of_peak = s.column_optional_double(23);
  m.pct_of_ceiling = s.column_optional_double(24);
  m.status = parse_measurement_status(s.column_text(25));
  m.reason = s.column_text(26);
  m.created_at = s.column_text(27);
  m.launch_parameters_json = s.column_text(30);
  return m;
}

namespace {
// rt_workloads' columns in bind_workload's order.
constexpr std::array<std::string_view, 7> workload_key_columns = {
    "dtype", "op", "n", "data_pattern", "seed", "outer", "inner"};
} // namespace

workload_record read_workload(const statement &s, int first) {
  const auto extent = [&](int i) { return static_cast<std::uint64_t>(s.column_int(first + i)); };
  workload_record w;
  w.id = s.column_int(first);
  w.dtype = s.column_text(first + 1);
  w.op = s.column_text(first + 2);
  w.n = extent(3);
  w.data_pattern = s.column_text(first + 4);
  w.seed = s.column_int(first + 5);
  w.outer = extent(6);
  w.inner = extent(7);
  return w;
}

std::string workload_matches(int first) {
  std::string out;
  for (std::size_t i = 0; i < workload_key_columns.size(); ++i)
    out.append(i == 0 ? "" : " AND ")
        .append("w.")
        .append(workload_key_columns[i])
        .append(" = ?")
        .append(std::to_string(first + static_cast<int>(i)));
  return out;
}

void bind_workload(statement &s, const workload_record &w, int first) {
  s.bind(first, w.dtype).bind(first + 1, w.op).bind(first + 2, static_cast<std::int64_t>(w.n));
  s.bind(first + 3, w.data_pattern).bind(first + 4, w.seed);
  s.bind(first + 5, static_cast<std::int64_t>(w.outer));
  s.bind(first + 6, static_cast<std::int64_t>(w.inner));
}

device_record read_device(const statement &s) {
  device_record d;
  d.id = s.column_int(0);
  d.name = s.column_text(1);
  d.uuid = s.column_text(2);
  d.cc_major = static_cast<int>(s.column_int(3));
  d.cc_minor = static_cast<int>(s.column_int(4));
  d.sm_count = static_cast<int>(s.column_int(5));
  d.l2_bytes = s.column_int(6);
  d.bus_width_bits = static_cast<int>(s.column_int(7));
  d.memory_clock_khz = static_cast<int>(s.column_int(8));
  d.driver_version = static_cast<int>(s.column_int(9));
  d.toolkit_version = static_cast<int>(s.column_int(10));
  return d;
}

const char *const device_columns =
    "SELECT id, name, uuid, cc_major, cc_minor, sm_count, l2_bytes, bus_width_bits,"
    " memory_clock_khz, driver_version, toolkit_version FROM rt_devices ";
const std::string_view device_insert =
    "INSERT INTO rt_devices (uuid, name, cc_major, cc_minor, sm_count, l2_bytes,"
    " bus_width_bits, memory_clock_khz, driver_version, toolkit_version)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

const std::string device_upsert =
    std::string(device_insert) + " ON CONFLICT (uuid) DO UPDATE SET " +
    set_from_excluded({"name", "cc_major", "cc_minor", "sm_count", "l2_bytes", "bus_width_bits",
                       "memory_clock_khz", "driver_version", "toolkit_version"}) +
    " RETURNING id";

void bind_device(statement &s, const device_record &d) {
  s.bind(1, d.uuid).bind(2, d.name).bind(3, d.cc_major).bind(4, d.cc_minor);
  s.bind(5, d.sm_count).bind(6, d.l2_bytes).bind(7, d.bus_width_bits);
  s.bind(8, d.memory_clock_khz).bind(9, d.driver_version).bind(10, d.toolkit_version);
}

std::int64_t returning_id(statement &s) {
  if (!s.step())
    throw store_error("an INSERT ... RETURNING id returned no row");
  const auto id = s.column_int(0);
  s.reset();
  return id;
}

const std::string model_of_d1 = std::string("(SELECT d2.uuid FROM rt_devices d2 WHERE ") +
                                same_model_sql + " ORDER BY d2.id LIMIT 1)";

const std::string same_calibration_ids =
    std::string("SELECT m2.id FROM rt_measurements m1 JOIN rt_devices d1 ON d1.id = m1.device_id"
                " JOIN rt_measurements m2 ON m2.workload_id = m1.workload_id"
                " JOIN rt_devices d2 ON d2.id = m2.device_id WHERE m1.id = ?1 AND ") +
    same_model_sql;

const char *const application_time_upsert =
    "INSERT INTO rt_application_times (measurement_id, median_s, sample_count, created_at)"
    " SELECT id, ?2, ?3, COALESCE(NULLIF(?4, ''), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
    " FROM rt_measurements WHERE id = ?1"
    " ON CONFLICT (measurement_id) DO UPDATE SET median_s = excluded.median_s,"
    " sample_count = excluded.sample_count, created_at = excluded.created_at"
    " RETURNING measurement_id";

// One place for the columns of rt_builds, read (find_build, merge) and written (record_build,
// merge).
const std::string_view build_select =
    "SELECT id, cache_key, program_key, variant_label, arch, nvrtc_version, options, status,"
    " log, compile_seconds, cubin, created_at, lowered FROM rt_builds ";
const std::string_view build_insert =
    "INSERT INTO rt_builds (cache_key, program_key, variant_label, arch, nvrtc_version,"
    " options, status, log, compile_seconds, cubin, lowered)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

const std::string build_upsert =
    std::string(build_insert) + " ON CONFLICT (cache_key) DO UPDATE SET " +
    set_from_excluded({"program_key", "variant_label", "arch", "nvrtc_version", "options",
                       "status", "log", "compile_seconds", "cubin", "lowered", "created_at"}) +
    " RETURNING id";

build_record read_build(statement &s) {
  build_record b;
  b.id = s.column_int(0);
  b.cache_key = s.column_text(1);
  b.program_key = s.column_text(2);
  b.variant_label = s.column_text(3);
  b.arch = s.column_text(4);
  b.nvrtc_version = s.column_text(5);
  b.options = s.column_text(6);
  b.status = parse_build_status(s.column_text(7));
  b.log = s.column_text(8);
  b.compile_seconds = s.column_double(9);
  b.cubin = s.column_blob(10);
  b.created_at = s.column_text(11);
  b.lowered = s.column_text(12);
  return b;
}

void bind_build(statement &s, const build_record &b) {
  s.bind(1, b.cache_key).bind(2, b.program_key).bind(3, b.variant_label).bind(4, b.arch);
  s.bind(5, b.nvrtc_version).bind(6, b.options).bind(7, to_string(b.status)).bind(8, b.log);
  s.bind(9, b.compile_seconds).bind(11, b.lowered);
  if (b.status == build_status::ok) // a failed build keeps its log, never a cubin
    s.bind_blob(10, b.cubin);
  else
    s.bind_null(10);
}

} // namespace reducetune::db::detail
