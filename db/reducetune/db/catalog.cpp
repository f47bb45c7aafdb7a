#include "reducetune/db/catalog.hpp"

#include "reducetune/db/schema.hpp"

namespace reducetune::db {

namespace {

// The newest successful build's lowered names of a variant for one architecture ("{}" when
// the file holds none: a replayed or merged file may not keep builds).
std::string lowered_names(const database &db, const std::string &label, int cc) {
  auto s = db.prepare("SELECT lowered FROM rt_builds WHERE variant_label = ?1 AND arch = ?2"
                      " AND status = 'ok' ORDER BY created_at DESC, id DESC LIMIT 1");
  s.bind(1, label).bind(2, "sm_" + std::to_string(cc));
  return s.step() ? s.column_text(0) : "{}";
}

// The columns of a Catalog entry, read by entry_at (the whole array's and the axis tables').
constexpr const char *entry_columns =
    "v.id, v.family, v.label, v.parameters, m.launch_label, m.median_s, m.gbps, m.pct_of_peak,"
    " v.flags, v.determinism, m.launch_parameters,"
    " (SELECT a.median_s FROM rt_application_times a WHERE a.measurement_id = m.id)";

// The entry whose entry_columns start at column `first` of s's current row.
catalog_entry entry_at(const statement &s, int first, const std::string &dtype,
                       const std::string &op) {
  const auto c = [first](int i) { return first + i; };
  catalog_entry e;
  e.variant = {s.column_int(c(0)),  s.column_text(c(1)), dtype,
               op,                  s.column_text(c(2)), s.column_text(c(3)),
               s.column_text(c(8)), s.column_text(c(9))};
  e.launch_label = s.column_text(c(4));
  e.launch_parameters_json = s.column_text(c(10));
  e.median_s = s.column_double(c(5));
  e.gbps = s.column_optional_double(c(6));
  e.pct_of_peak = s.column_optional_double(c(7));
  e.application_s = s.column_optional_double(c(11));
  return e;
}

} // namespace

catalog catalog::open(const std::filesystem::path &path, point_selection only) {
  const auto db = open_for_reading(path);
  return load(db, only);
}

void catalog::load_devices(const database &db) {
  // One entry per model (same_model_sql), the first registered device of the model standing
  // for it: every UUID of the model finds that entry, and the model's measurements answer
  // together (GPUs of one model tuned together each hold part of the points).
  auto s = db.prepare(std::string("SELECT d1.id, d1.name, d1.uuid, d1.cc_major, d1.cc_minor,"
                                  " d1.sm_count, d1.l2_bytes, d1.bus_width_bits,"
                                  " d1.memory_clock_khz, d1.driver_version, d1.toolkit_version,"
                                  " (SELECT MIN(d2.id) FROM rt_devices d2 WHERE ") +
                      same_model_sql + ") FROM rt_devices d1 ORDER BY d1.id");
  while (s.step()) {
    const device_record d{s.column_int(0),
                          s.column_text(1),
                          s.column_text(2),
                          static_cast<int>(s.column_int(3)),
                          static_cast<int>(s.column_int(4)),
                          static_cast<int>(s.column_int(5)),
                          s.column_int(6),
                          static_cast<int>(s.column_int(7)),
                          static_cast<int>(s.column_int(8)),
                          static_cast<int>(s.column_int(9)),
                          static_cast<int>(s.column_int(10))};
    const std::int64_t model = s.column_int(11);
    if (model == d.id) { // the first of its model (ids ascend: it comes before the others)
      m_index_of_id[d.id] = m_devices.size();
      m_devices.push_back(catalog_device{d, {}, {}});
    }
    const std::size_t index = m_index_of_id.at(model);
    m_index_of_id[d.id] = index;
    m_devices[index].uuids.push_back(d.uuid);
  }
}

catalog catalog::load(const database &db, point_selection only) {
  catalog c;
  c.load_devices(db);

  // First pass reads only rt_measurements_by_workload (it covers device, workload, status,
  // median and the row id), sorted so that the first row of each (device, dtype, op, n) is
  // the fastest; only those winners' rows are then read.
  struct winner {
    std::size_t device;
    std::string dtype, op;
    std::uint64_t n;
    std::int64_t id;
  };
  std::vector<winner> winners;
  {
    auto s = db.prepare(std::string("SELECT (SELECT MIN(d2.id) FROM rt_devices d1"
                        " JOIN rt_devices d2 ON ") + same_model_sql +
                        " WHERE d1.id = m.device_id) AS model, w.dtype, w.op, w.n, m.id"
                        " FROM rt_measurements m JOIN rt_workloads w ON w.id = m.workload_id"
                        " JOIN rt_variants v ON v.id = m.variant_id"
                        " WHERE m.status = 'ok' AND m.median_s IS NOT NULL"
                        " AND w.outer = 1 AND w.inner = 1" // the whole array; axis: below
                        " AND (?1 OR v.flags = '[]') AND (NOT ?2 OR v.determinism = 'run_to_run')"
                        // equal medians: by labels, so that the answer does not depend on
                        // the order rows were written in (a merged file, several workers)
                        " ORDER BY model, w.dtype, w.op, w.n, m.median_s, v.label,"
                        " m.launch_label, m.id");
    s.bind(1, only.allow_flagged ? 1 : 0).bind(2, only.deterministic_only ? 1 : 0);
    while (s.step()) {
      const auto device = c.m_index_of_id.at(s.column_int(0));
      auto dtype = s.column_text(1);
      auto op = s.column_text(2);
      const auto n = static_cast<std::uint64_t>(s.column_int(3));
      if (!winners.empty() && winners.back().device == device && winners.back().n == n &&
          winners.back().dtype == dtype && winners.back().op == op)
        continue; // a slower variant at a size already answered
      winners.push_back({device, std::move(dtype), std::move(op), n, s.column_int(4)});
    }
  }
  auto s = db.prepare(std::string("SELECT ") + entry_columns +
                      " FROM rt_measurements m JOIN rt_variants v ON v.id = m.variant_id"
                      " WHERE m.id = ?1");
  for (const auto &w : winners) {
    auto &dev = c.m_devices[w.device];
    if (dev.tables.empty() || dev.tables.back().dtype != w.dtype || dev.tables.back().op != w.op)
      dev.tables.push_back(catalog_table{w.dtype, w.op, {}, {}});
    auto &table = dev.tables.back();
    s.bind(1, w.id);
    if (!s.step())
      throw store_error("measurement " + std::to_string(w.id) + " vanished while loading");
    catalog_entry e = entry_at(s, 0, w.dtype, w.op);
    e.bucket_n = w.n;
    e.measurement_id = w.id;
    s.reset();
    e.lowered_json = lowered_names(db, e.variant.label, dev.device.compute_capability());
    e.min_n = table.sizes.empty() ? 0 : bucket_threshold(table.sizes.back(), w.n);
    table.sizes.push_back(w.n);
    table.entries.push_back(std::move(e));
  }
  c.load_axis_tables(db, only);
  return c;
}

// Every selected status-ok point of every other shape than the whole array's, one query,
// ranked per shape as the whole-array winners are (median, then labels, then id).
void catalog::load_axis_tables(const database &db, const point_selection &only) {
  auto s = db.prepare(std::string("SELECT (SELECT MIN(d2.id) FROM rt_devices d1"
                      " JOIN rt_devices d2 ON ") + same_model_sql +
                      " WHERE d1.id = m.device_id) AS model, w.dtype, w.op, w.outer, w.n,"
                      " w.inner, m.id, " + entry_columns + " FROM rt_measurements m"
                      " JOIN rt_workloads w ON w.id = m.workload_id"
                      " JOIN rt_variants v ON v.id = m.variant_id"
                      " WHERE m.status = 'ok' AND m.median_s IS NOT NULL"
                      " AND (w.outer <> 1 OR w.inner <> 1)"
                      " AND (?1 OR v.flags = '[]') AND (NOT ?2 OR v.determinism = 'run_to_run')"
                      " ORDER BY model, w.dtype, w.op, w.outer, w.n, w.inner, m.median_s,"
                      " v.label, m.launch_label, m.id");
  s.bind(1, only.allow_flagged ? 1 : 0).bind(2, only.deterministic_only ? 1 : 0);
  while (s.step()) {
    auto &dev = m_devices[m_index_of_id.at(s.column_int(0))];
    const std::string dtype = s.column_text(1), op = s.column_text(2);
    const reduction_shape shape{static_cast<std::uint64_t>(s.column_int(3)),
                                static_cast<std::uint64_t>(s.column_int(4)),
                                static_cast<std::uint64_t>(s.column_int(5))};
    auto &tables = dev.axis_tables;
    if (tables.empty() || tables.back().dtype != dtype || tables.back().op != op)
      tables.push_back(catalog_axis_table{dtype, op, {}, {}});
    auto &t = tables.back();
    if (t.shapes.empty() || !(t.shapes.back() == shape)) {
      t.shapes.push_back(shape);
      t.ranked.emplace_back();
    }
    catalog_entry e = entry_at(s, 7, dtype, op);
    e.bucket_n = shape.r;
    e.measurement_id = s.column_int(6);
    t.ranked.back().push_back(std::move(e));
  }
  for (auto &dev : m_devices) {
    // one query per variant, not per row: a tuned grid measures a variant at many shapes
    std::map<std::string, std::string> lowered;
    for (auto &t : dev.axis_tables)
      for (auto &ranked : t.ranked)
        for (auto &e : ranked) {
          auto [it, fresh] = lowered.try_emplace(e.variant.label);
          if (fresh)
            it->second = lowered_names(db, e.variant.label, dev.device.compute_capability());
          e.lowered_json = it->second;
        }
  }
}

bool device_matches(device_key k, std::string_view name, std::span<const std::string> uuids,
                    int compute_capability, const device_query &q) noexcept {
  switch (k) {
  case device_key::uuid:
    for (const auto &u : uuids)
      if (!q.uuid.empty() && u == q.uuid)
        return true;
    return false;
  case device_key::name:
    return !q.name.empty() && name == q.name;
  case device_key::compute_capability:
    return q.compute_capability > 0 && compute_capability == q.compute_capability;
  }
  return false;
}

bool device_matches(device_key k, const catalog_device &d, const device_query &q) noexcept {
  return device_matches(k, d.device.name, d.uuids, d.device.compute_capability(), q);
}

const catalog_device *catalog::device_of(std::string_view device) const noexcept {
  const device_query q{device, device, 0};
  for (const device_key k : device_match_order)
    for (const auto &d : m_devices)
      if (device_matches(k, d, q))
        return &d;
  return nullptr;
}

namespace {

// The first table of (dtype, op) in `tables` of the model q matches, by device_match_order,
// and that model: the one loop of table_for and axis_table_for.
template <class Table>
std::pair<const catalog_device *, const Table *>
first_table(const std::vector<catalog_device> &devices,
            std::vector<Table> catalog_device::*tables, const device_query &q,
            std::string_view dtype, std::string_view op) noexcept {
  for (const device_key k : device_match_order)
    for (const auto &d : devices) {
      if (!device_matches(k, d, q))
        continue;
      for (const auto &table : d.*tables)
        if (table.dtype == dtype && table.op == op)
          return {&d, &table};
    }
  return {nullptr, nullptr};
}

} // namespace

const catalog_table *catalog::table_for(const device_query &q, std::string_view dtype,
                                        std::string_view op) const noexcept {
  // export_header's select() is generated from the same loop (device_match_order).
  return first_table(m_devices, &catalog_device::tables, q, dtype, op).second;
}

std::pair<const catalog_device *, const catalog_axis_table *>
catalog::axis_table_for(const device_query &q, std::string_view dtype,
                        std::string_view op) const noexcept {
  return first_table(m_devices, &catalog_device::axis_tables, q, dtype, op);
}

const catalog_entry *catalog::find(const device_query &q, std::string_view dtype,
                                   std::string_view op, std::uint64_t n) const noexcept {
  const catalog_table *table = table_for(q, dtype, op);
  if (table == nullptr)
    return nullptr;
  const auto i = nearest_bucket(table->sizes, n);
  return i ? &table->entries[*i] : nullptr;
}

const catalog_entry *catalog::find(std::string_view device, std::string_view dtype,
                                   std::string_view op, std::uint64_t n) const noexcept {
  return find(device_query{device, device, 0}, dtype, op, n);
}

std::optional<best_choice> catalog::best(std::string_view device, std::string_view dtype,
                                         std::string_view op, std::uint64_t n) const {
  const auto *e = find(device, dtype, op, n);
  if (e == nullptr)
    return std::nullopt;
  return best_choice{e->measurement_id,         n,           e->bucket_n, e->variant,
                     e->launch_label,           e->launch_parameters_json,
                     e->median_s,               e->gbps,     e->pct_of_peak};
}

} // namespace reducetune::db
