// bench-catalog: fills a temporary results database with synthetic measurements and prints
// bulk insert throughput and Catalog look-up latency (target: median < 1 ms).
//
//   bench-catalog [--measurements N] [--lookups M] [--db PATH] [--keep]
//
// The timings (samples) are synthetic; what is measured is the store, not a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "reducetune/db/catalog.hpp"
#include "reducetune/db/store.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
namespace rdb = reducetune::db;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

struct options {
  std::size_t measurements = 20000;
  std::size_t lookups = 100000;
  std::size_t single = 2000; // measurements recorded one transaction each
  std::filesystem::path db;
  bool keep = false;
};

options parse(int argc, char **argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--measurements")
      o.measurements = std::stoul(next());
    else if (a == "--lookups")
      o.lookups = std::stoul(next());
    else if (a == "--db")
      o.db = next();
    else if (a == "--keep")
      o.keep = true;
    else {
      std::fprintf(stderr,
                   "usage: bench-catalog [--measurements N] [--lookups M] [--db PATH] [--keep]\n");
      std::exit(2);
    }
  }
  return o;
}

const char *const dtypes[] = {"int32", "int64", "float32", "float64"};
const char *const ops[] = {"sum", "min", "max", "prod"};

// Measurement i of a synthetic grid: 4 dtypes x 4 ops x 16 sizes x as many variants as needed.
rdb::measurement_record synthetic(std::int64_t device_id, std::size_t i, std::mt19937_64 &rng) {
  const auto cell = i % (4 * 4 * 16);
  const auto variant = i / (4 * 4 * 16);
  const std::string dtype = dtypes[cell % 4];
  const std::string op = ops[(cell / 4) % 4];
  const std::uint64_t n = 1ull << (10 + cell / 16);
  rdb::measurement_record m;
  m.device_id = device_id;
  m.variant = {0,
               "tunable",
               dtype,
               op,
               "tunable." + dtype + "." + op + ".v_" + std::to_string(variant),
               "{\"block_size\": " + std::to_string(32 << (variant % 6)) +
                   ", \"unroll\": " + std::to_string(1 + variant % 8) + "}"};
  m.launch_label = "ept_" + std::to_string(1 << (variant % 7)) + ".cap_0";
  m.workload = {0, dtype, op, n, "random", 1};
  m.template_hash = "bench";
  m.driver_version = 12040;
  m.toolkit_version = 12040;
  std::uniform_real_distribution<double> jitter(0.98, 1.02);
  const double base =
      1e-6 + static_cast<double>(n) * 4e-12 * (1.0 + static_cast<double>(rng() % 100) / 50.0);
  m.samples_s.resize(50);
  for (auto &s : m.samples_s)
    s = base * jitter(rng);
  m.gbps = static_cast<double>(n) * 4.0 / base / 1e9;
  return m;
}

struct insert_times {
  std::size_t count = 0, bulk_count = 0, batch = 1000;
  double bulk_s = 0, single_s = 0;
};

// Records opt.measurements synthetic measurements: in bulk (batch per transaction), then the
// last opt.single one transaction each, as the tuner records them.
insert_times insert_all(rdb::store &s, std::int64_t dev_id, const options &opt,
                        std::mt19937_64 &rng) {
  std::vector<rdb::measurement_record> all;
  all.reserve(opt.measurements);
  for (std::size_t i = 0; i < opt.measurements; ++i)
    all.push_back(synthetic(dev_id, i, rng));
  insert_times t;
  t.count = all.size();
  t.bulk_count = opt.measurements > opt.single ? opt.measurements - opt.single : 0;
  auto t0 = clock_type::now();
  for (std::size_t i = 0; i < t.bulk_count; i += t.batch)
    s.record_measurements(std::span(all).subspan(i, std::min(t.batch, t.bulk_count - i)));
  t.bulk_s = seconds_since(t0);
  t0 = clock_type::now();
  for (std::size_t i = t.bulk_count; i < all.size(); ++i)
    s.record_measurement(all[i]);
  t.single_s = seconds_since(t0);
  return t;
}

struct lookup_times {
  double load_s = 0, total_s = 0;
  std::vector<double> each, sql_each; // one Catalog / SQL look-up each
  std::size_t found = 0;
};

lookup_times time_lookups(const rdb::store &s, const std::filesystem::path &path,
                          std::int64_t dev_id, std::size_t lookups, std::mt19937_64 &rng) {
  lookup_times t;
  auto t0 = clock_type::now();
  const auto cat = rdb::catalog::open(path);
  t.load_s = seconds_since(t0);
  t.each.reserve(lookups);
  t0 = clock_type::now();
  for (std::size_t i = 0; i < lookups; ++i) {
    const auto n = 1000 + rng() % 40'000'000;
    const char *dtype = dtypes[rng() % 4];
    const char *op = ops[rng() % 4];
    const auto one = clock_type::now();
    const auto b = cat.best("GPU-bench", dtype, op, n);
    t.each.push_back(seconds_since(one));
    t.found += b ? 1 : 0;
  }
  t.total_s = seconds_since(t0);
  for (int i = 0; i < 1000; ++i) {
    const auto one = clock_type::now();
    (void)s.best(dev_id, dtypes[i % 4], ops[(i / 4) % 4], 1000 + rng() % 40'000'000);
    t.sql_each.push_back(seconds_since(one));
  }
  return t;
}

void report(const std::filesystem::path &path, const insert_times &in, const lookup_times &l) {
  const double median = percentile(l.each, 0.5);
  std::printf("database            %s (%.1f MiB)\n", path.c_str(),
              static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0));
  std::printf("measurements        %zu (50 samples each; %zu bulk, %zu one per transaction)\n",
              in.count, in.bulk_count, in.count - in.bulk_count);
  if (in.bulk_count > 0)
    std::printf("bulk insert         %.0f measurements/s (%zu per transaction)\n",
                static_cast<double>(in.bulk_count) / in.bulk_s, in.batch);
  if (in.count > in.bulk_count)
    std::printf("single insert       %.0f measurements/s (one transaction each)\n",
                static_cast<double>(in.count - in.bulk_count) / in.single_s);
  std::printf("catalog load        %.3f ms\n", l.load_s * 1e3);
  std::printf("catalog best()      median %.3f us, p99 %.3f us, max %.3f us over %zu look-ups"
              " (%.3f us mean incl. timer) -> %s 1 ms target\n",
              median * 1e6, percentile(l.each, 0.99) * 1e6,
              *std::max_element(l.each.begin(), l.each.end()) * 1e6, l.each.size(),
              l.total_s / static_cast<double>(l.each.size()) * 1e6,
              median < 1e-3 ? "meets" : "MISSES");
  std::printf("store best() (SQL)  median %.3f us over %zu look-ups\n",
              percentile(l.sql_each, 0.5) * 1e6, l.sql_each.size());
  std::printf("answered            %zu of %zu look-ups\n", l.found, l.each.size());
}

} // namespace

int main(int argc, char **argv) {
  const auto opt = parse(argc, argv);
  auto path = opt.db;
  std::filesystem::path made_dir;
  if (path.empty()) {
    auto pattern = (std::filesystem::temp_directory_path() / "rt-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    made_dir = pattern;
    path = made_dir / "bench.sqlite";
  }
  try {
    std::mt19937_64 rng(1);
    auto s = rdb::store::open(path);
    rdb::device_record dev;
    dev.name = "bench device";
    dev.uuid = "GPU-bench";
    dev.cc_major = 9;
    const auto dev_id = s.register_device(dev);
    const auto inserts = insert_all(s, dev_id, opt, rng);
    const auto lookups = time_lookups(s, path, dev_id, opt.lookups, rng);
    report(path, inserts, lookups);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench-catalog: %s\n", e.what());
    return 1;
  }
  if (!made_dir.empty() && !opt.keep)
    std::filesystem::remove_all(made_dir);
  return 0;
}
