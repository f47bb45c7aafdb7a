#include "reducetune/db/catalog.hpp"

#include "reducetune/db/schema.hpp"

namespace reducetune::db {

catalog catalog::open(const std::filesystem::path &path) {
  const auto db = open_for_reading(path);
  return load(db);
}

catalog catalog::load(const database &db) {
  catalog c;
  {
    auto s = db.prepare("SELECT id, name, uuid, cc_major, cc_minor, sm_count, l2_bytes,"
                        " bus_width_bits, memory_clock_khz, driver_version, toolkit_version"
                        " FROM rt_devices ORDER BY id");
    while (s.step()) {
      catalog_device d;
      d.device = {s.column_int(0),
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
      c.m_by_uuid.emplace(d.device.uuid, c.m_devices.size());
      c.m_by_name.emplace(d.device.name, c.m_devices.size()); // keeps the first of a name
      c.m_devices.push_back(std::move(d));
    }
  }
  std::map<std::int64_t, std::size_t> index_of;
  for (std::size_t i = 0; i < c.m_devices.size(); ++i)
    index_of[c.m_devices[i].device.id] = i;

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
    auto s = db.prepare("SELECT m.device_id, w.dtype, w.op, w.n, m.id"
                        " FROM rt_measurements m JOIN rt_workloads w ON w.id = m.workload_id"
                        " WHERE m.status = 'ok' AND m.median_s IS NOT NULL"
                        " ORDER BY m.device_id, w.dtype, w.op, w.n, m.median_s, m.id");
    while (s.step()) {
      const auto device = index_of.at(s.column_int(0));
      auto dtype = s.column_text(1);
      auto op = s.column_text(2);
      const auto n = static_cast<std::uint64_t>(s.column_int(3));
      if (!winners.empty() && winners.back().device == device && winners.back().n == n &&
          winners.back().dtype == dtype && winners.back().op == op)
        continue; // a slower variant at a size already answered
      winners.push_back({device, std::move(dtype), std::move(op), n, s.column_int(4)});
    }
  }
  auto s = db.prepare("SELECT v.id, v.family, v.label, v.parameters, m.launch_label,"
                      " m.median_s, m.gbps, m.pct_of_peak FROM rt_measurements m"
                      " JOIN rt_variants v ON v.id = m.variant_id WHERE m.id = ?1");
  for (const auto &w : winners) {
    auto &dev = c.m_devices[w.device];
    if (dev.tables.empty() || dev.tables.back().dtype != w.dtype || dev.tables.back().op != w.op)
      dev.tables.push_back(catalog_table{w.dtype, w.op, {}, {}});
    auto &table = dev.tables.back();
    s.bind(1, w.id);
    if (!s.step())
      throw store_error("measurement " + std::to_string(w.id) + " vanished while loading");
    catalog_entry e;
    e.bucket_n = w.n;
    e.measurement_id = w.id;
    e.variant = {s.column_int(0),  s.column_text(1), w.dtype, w.op,
                 s.column_text(2), s.column_text(3)};
    e.launch_label = s.column_text(4);
    e.median_s = s.column_double(5);
    e.gbps = s.column_optional_double(6);
    e.pct_of_peak = s.column_optional_double(7);
    s.reset();
    e.min_n = table.sizes.empty() ? 0 : bucket_threshold(table.sizes.back(), w.n);
    table.sizes.push_back(w.n);
    table.entries.push_back(std::move(e));
  }
  return c;
}

const catalog_entry *catalog::find(std::string_view device, std::string_view dtype,
                                   std::string_view op, std::uint64_t n) const noexcept {
  auto it = m_by_uuid.find(device);
  if (it == m_by_uuid.end()) {
    it = m_by_name.find(device);
    if (it == m_by_name.end())
      return nullptr;
  }
  for (const auto &table : m_devices[it->second].tables) {
    if (table.dtype != dtype || table.op != op)
      continue;
    const auto i = nearest_bucket(table.sizes, n);
    return i ? &table.entries[*i] : nullptr;
  }
  return nullptr;
}

std::optional<best_choice> catalog::best(std::string_view device, std::string_view dtype,
                                         std::string_view op, std::uint64_t n) const {
  const auto *e = find(device, dtype, op, n);
  if (e == nullptr)
    return std::nullopt;
  return best_choice{e->measurement_id, n,           e->bucket_n, e->variant,
                     e->launch_label,   e->median_s, e->gbps,     e->pct_of_peak};
}

} // namespace reducetune::db
