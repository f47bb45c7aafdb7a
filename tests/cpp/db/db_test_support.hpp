// Helpers shared by the store tests: temporary folders, file bytes, older files, sample
// records.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "reducetune/db/embedded_sql.hpp"
#include "reducetune/db/records.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"

namespace rt_test {

// A fresh folder under $TMPDIR, removed with its content at scope exit.
class temp_dir {
public:
  temp_dir() {
    auto pattern = (std::filesystem::temp_directory_path() / "rt-db-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
  }
  temp_dir(const temp_dir &) = delete;
  temp_dir &operator=(const temp_dir &) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  [[nodiscard]] const std::filesystem::path &path() const { return m_path; }
  [[nodiscard]] std::filesystem::path operator/(const std::string &name) const {
    return m_path / name;
  }

private:
  std::filesystem::path m_path;
};

inline std::string file_bytes(const std::filesystem::path &p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path &p, const std::string &bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// FNV-1a: a short fingerprint to print beside the full byte comparison.
inline std::uint64_t fnv1a(const std::string &bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

// A results file at schema `version` as that version's store made it (its migrations up to
// there, reducetune's application id, user_version), still empty: a migration test writes
// the old rows into it, then opens it with the store of today.
inline reducetune::db::database file_at_schema(const std::filesystem::path &p, int version) {
  namespace db = reducetune::db;
  db::database file(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  for (const auto &m : db::detail::migrations())
    if (m.version <= version)
      file.exec(m.sql);
  file.exec("PRAGMA application_id = " + std::to_string(db::application_id));
  file.exec("PRAGMA user_version = " + std::to_string(version));
  return file;
}

// A device row of an older file, in the columns every schema so far has: what a migration
// keeps of it is its id and uuid, so the rest is the same small numbers.
inline void insert_old_device(reducetune::db::database &file, std::int64_t id,
                              const std::string &uuid) {
  file.exec("INSERT INTO rt_devices (id, uuid, name, cc_major, cc_minor, sm_count, l2_bytes,"
            " bus_width_bits, memory_clock_khz, driver_version, toolkit_version) VALUES (" +
            std::to_string(id) + ", '" + uuid + "', 'H', 9, 0, 132, 1, 1, 1, 1, 1)");
}

inline reducetune::db::device_record h100(std::string uuid = "GPU-test-0001") {
  reducetune::db::device_record d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = std::move(uuid);
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 50 * 1024 * 1024;
  d.bus_width_bits = 5120;
  d.memory_clock_khz = 2619000;
  d.driver_version = 12040;
  d.toolkit_version = 12040;
  return d;
}

// Another GPU, the H100's record under another UUID, name and compute capability.
inline reducetune::db::device_record gpu(std::string uuid, std::string name, int cc_major = 9) {
  auto d = h100(std::move(uuid));
  d.name = std::move(name);
  d.cc_major = cc_major;
  return d;
}

// A measurement of variant "tunable.<dtype>.<op>.bs_<block>" at size n whose samples are
// all close to seconds (so its median is seconds).
inline reducetune::db::measurement_record
measurement(std::int64_t device_id, std::uint64_t n, int block, double seconds,
            std::string dtype = "float32", std::string op = "sum", std::int64_t seed = 1) {
  reducetune::db::measurement_record m;
  m.device_id = device_id;
  m.variant.family = "tunable";
  m.variant.dtype = dtype;
  m.variant.op = op;
  m.variant.label = "tunable." + dtype + "." + op + ".bs_" + std::to_string(block);
  m.variant.parameters_json =
      "{\"block_size\": " + std::to_string(block) + ", \"warp\": \"shuffle\"}";
  m.launch_label = "ept_16.cap_0";
  // a two-pass point: run-to-run deterministic, so that best's default selection admits it
  m.variant.determinism = "run_to_run";
  m.workload = {0, dtype, op, n, "random", seed};
  m.template_hash = "hash-a";
  m.driver_version = 12040;
  m.toolkit_version = 12040;
  m.samples_s = {seconds * 1.01, seconds, seconds * 0.99};
  m.gbps = static_cast<double>(n) * 4.0 / seconds / 1e9;
  m.pct_of_peak = 50.0;
  return m;
}

// Block 128 fastest at n = 1024, 256 at 4096 and 512 at 1 Mi, each beside a slower block size
// (`slower_at_1mi` at 1 Mi): three sizes to test which measured size answers a query.
inline void record_three_sizes(reducetune::db::store &s, std::int64_t dev, int slower_at_1mi) {
  s.record_measurement(measurement(dev, 1024, 128, 1e-6));
  s.record_measurement(measurement(dev, 1024, 256, 2e-6));
  s.record_measurement(measurement(dev, 4096, 128, 3e-6));
  s.record_measurement(measurement(dev, 4096, 256, 2e-6));
  s.record_measurement(measurement(dev, 1 << 20, 512, 1e-4));
  s.record_measurement(measurement(dev, 1 << 20, slower_at_1mi, 2e-4));
}

} // namespace rt_test
