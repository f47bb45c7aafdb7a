// reducetune-bench's report on SYNTHETIC rows (no GPU, nothing measured: every time below is
// made up so that the expected text is known exactly): the table's columns and x CUB
// (t_CUB / t_variant), the fastest verified variant per n (CUB, WRONG, FAILED and skipped rows
// never ranked), the run-to-run agreement (largest difference for n >= 2^20, PASS at <= 3 %,
// FAIL above, later runs against run 1, only ok rows compared) and the JSON fields of
// docs/results/*_bench_repeat_graph.json.
#include "catch.hpp"

#include "bench/options.hpp"
#include "bench/report.hpp"
#include "bench/rows.hpp"

#include "reducetune/errors.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace reducetune;
using namespace reducetune::bench;

namespace {

// A synthetic device: 1 GHz memory clock, 1024-bit bus, so the peak is 256 GB/s.
device_info synthetic_device() {
  device_info d;
  d.name = "synthetic device";
  d.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  d.cc_major = 9;
  d.sm_count = 132;
  d.l2_bytes = 50ULL << 20;
  d.bus_width_bits = 1024;
  d.memory_clock_khz = 1000000;
  d.driver_version = 13000;
  d.runtime_version = 12090;
  return d;
}

// Two shapes over 4 GiB, the second the faster, with 7 cold samples behind it.
ceiling_result synthetic_ceiling() {
  ceiling_result c;
  c.bytes = 4ULL << 30;
  c.bytes_per_s = 838.8608e9;
  c.shape = "even-share 256x8";
  c.shapes = {{"grid-stride 256x4", 800e9}, {"even-share 256x8", 838.8608e9}};
  c.cold.samples_s.assign(7, c.bytes / c.bytes_per_s);
  return c;
}

// A synthetic ok row: three cold samples with the given median (noise 0.5 %); hot samples only
// when hot_median_s > 0.
table_row synthetic_ok(int run, dtype t, int log2n, const std::string &name, double median_s,
                       double hot_median_s = 0, const std::string &launch = "b_256") {
  table_row r{run, t, log2n, name, "synthetic." + name, launch, "", {}};
  r.r.launches = 2;
  r.r.cold.samples_s = {median_s, median_s, median_s};
  r.r.cold.stats.count = 3;
  r.r.cold.stats.median = r.r.cold.stats.min = r.r.cold.stats.max = median_s;
  r.r.cold.stats.mean = median_s;
  r.r.cold.stats.rel_stddev = 0.005;
  r.r.cold.stopped = stop_reason::converged;
  if (hot_median_s > 0) {
    r.r.hot.samples_s = {hot_median_s, hot_median_s};
    r.r.hot.stats.count = 2;
    r.r.hot.stats.median = r.r.hot.stats.min = r.r.hot.stats.mean = hot_median_s;
    r.r.hot.stopped = stop_reason::max_samples;
  }
  return r;
}

// A synthetic row that is not ok; its cold median is set (and small) to show that it is
// still never ranked or compared.
table_row synthetic_not_ok(int run, dtype t, int log2n, const std::string &name,
                           const std::string &status, const std::string &reason,
                           const std::string &launch = "b_256") {
  table_row r = synthetic_ok(run, t, log2n, name, 1e-6, 0, launch);
  r.r.status = status;
  r.r.reason = reason;
  r.r.launches = 0;
  return r;
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string &text, const std::string &line) {
  for (const auto &l : lines_of(text))
    if (l == line) return true;
  return false;
}

// The part of text from the first occurrence of marker on ("" when absent).
std::string from(const std::string &text, const std::string &marker) {
  const auto at = text.find(marker);
  return at == std::string::npos ? "" : text.substr(at);
}

// The synthetic rows of one float32 table (run 1) plus rows of another run and dtype.
std::vector<table_row> synthetic_table_rows() {
  const auto f = dtype::float32;
  std::vector<table_row> rows;
  rows.push_back(synthetic_ok(1, f, 20, "good", 10e-6, 8e-6));
  rows.push_back(synthetic_ok(1, f, 20, "harris3", 40e-6, 0, "mb_64"));
  auto racy = synthetic_ok(1, f, 20, "good.volatile_unsafe.tree", 12.5e-6);
  racy.flag = "racy under independent thread scheduling";
  rows.push_back(racy);
  rows.push_back(synthetic_not_ok(1, f, 20, "fast_but_wrong", "WRONG", "expected 1, got 2"));
  rows.push_back(synthetic_ok(1, f, 20, "CUB", 20e-6, 0, ""));
  rows.push_back(synthetic_ok(1, f, 22, "good", 20e-6));
  rows.push_back(synthetic_not_ok(1, f, 22, "CUB", "FAILED", "synthetic failure", ""));
  rows.push_back(
      synthetic_not_ok(1, f, 24, "harris0", "skipped", "n > 2^22 (--slow-max-log2)", "mb_64"));
  rows.push_back(synthetic_ok(1, f, 24, "harris3", 30e-6, 0, "mb_64"));
  rows.push_back(synthetic_ok(1, f, 24, "CUB", 5e-6, 0, ""));
  rows.push_back(synthetic_ok(2, f, 20, "only_in_run_2", 1e-6));
  rows.push_back(synthetic_ok(1, dtype::int32, 20, "only_in_int32", 1e-6));
  return rows;
}

} // namespace

TEST_CASE("table: the columns of ok rows, x CUB = t_CUB / t_variant", "[bench][report]") {
  const auto rows = synthetic_table_rows();
  const std::string md = table(rows, 1, dtype::float32, synthetic_device(), 0);
  INFO(md);
  CHECK(has_line(md, "## float32 (run 1)"));
  CHECK(has_line(md, "| n | variant | launch | median us (cold) | GB/s | % peak | % ceiling | "
                     "x CUB | hot us | noise % | samples | status |"));
  // 2^20 float32 = 4 MiB; 10 us -> 419.4 GB/s, 163.8 % of 256 GB/s; CUB 20 us / 10 us = 2.000
  CHECK(has_line(md, "| 2^20 | good | b_256 | 10.00 | 419.4 | 163.8 |  | 2.000 | 8.00 | 0.50 | "
                     "3 | ok |"));
  // slower than CUB: 20 / 40 = 0.500; no hot samples: the hot column is empty
  CHECK(has_line(md, "| 2^20 | harris3 | mb_64 | 40.00 | 104.9 | 41.0 |  | 0.500 |  | 0.50 | "
                     "3 | ok |"));
  CHECK(has_line(md, "| 2^20 | good.volatile_unsafe.tree (racy) | b_256 | 12.50 | 335.5 | "
                     "131.1 |  | 1.600 |  | 0.50 | 3 | ok |"));
  CHECK(has_line(md, "| 2^20 | CUB |  | 20.00 | 209.7 | 81.9 |  | 1.000 |  | 0.50 | 3 | ok |"));
  // CUB failed at 2^22: no x CUB there
  CHECK(has_line(md, "| 2^22 | good | b_256 | 20.00 | 838.9 | 327.7 |  |  |  | 0.50 | 3 | ok |"));
  // 2^24 float32 = 64 MiB in 30 us: 2237.0 GB/s (synthetic: above the peak); 5 / 30 = 0.167
  CHECK(has_line(md, "| 2^24 | harris3 | mb_64 | 30.00 | 2237.0 | 873.8 |  | 0.167 |  | 0.50 | "
                     "3 | ok |"));
  // rows that are not ok show their status and reason, no numbers
  CHECK(has_line(md, "| 2^20 | fast_but_wrong | b_256 | | | | | | | | | "
                     "WRONG: expected 1, got 2 |"));
  CHECK(has_line(md, "| 2^22 | CUB |  | | | | | | | | | FAILED: synthetic failure |"));
  CHECK(has_line(md, "| 2^24 | harris0 | mb_64 | | | | | | | | | "
                     "skipped: n > 2^22 (--slow-max-log2) |"));
  // another run or dtype is not in this table
  CHECK(md.find("only_in_run_2") == std::string::npos);
  CHECK(md.find("only_in_int32") == std::string::npos);

  // with a measured ceiling (838.8608 GB/s) the % ceiling column is filled
  const std::string with_ceiling = table(rows, 1, dtype::float32, synthetic_device(), 838.8608e9);
  CHECK(has_line(with_ceiling, "| 2^20 | good | b_256 | 10.00 | 419.4 | 163.8 | 50.0 | 2.000 | "
                               "8.00 | 0.50 | 3 | ok |"));
}

TEST_CASE("table: the fastest verified variant per n never ranks CUB or a row that is not ok",
          "[bench][report]") {
  const std::string md = table(synthetic_table_rows(), 1, dtype::float32, synthetic_device(), 0);
  const std::string fastest = from(md, "Fastest verified variant per n");
  INFO(md);
  REQUIRE(!fastest.empty());
  CHECK(has_line(fastest, "| n | variant | median us | x CUB |"));
  // fast_but_wrong (1 us, WRONG) is faster but not ranked
  CHECK(has_line(fastest, "| 2^20 | good | 10.00 | 2.000 |"));
  CHECK(has_line(fastest, "| 2^22 | good | 20.00 |  |"));
  // CUB (5 us) is the fastest at 2^24 but excluded; harris0 was skipped
  CHECK(has_line(fastest, "| 2^24 | harris3 | 30.00 | 0.167 |"));
  CHECK(fastest.find("fast_but_wrong") == std::string::npos);
  CHECK(fastest.find("| CUB |") == std::string::npos);
  CHECK(fastest.find("harris0") == std::string::npos);
}

TEST_CASE("repeat_report: within 3 % at n >= 2^20 passes; ranked rows are ok rows only",
          "[bench][report][repeat]") {
  const auto f = dtype::float32;
  std::vector<table_row> rows{
      synthetic_ok(1, f, 18, "harris3", 10e-6), // 50 %, but below 2^20: listed, not ranked
      synthetic_ok(1, f, 20, "good", 10e-6),
      synthetic_ok(1, f, 20, "CUB", 10e-6),
      synthetic_ok(1, f, 22, "good", 10e-6),
      synthetic_not_ok(1, f, 24, "harris0", "skipped", "n > 2^22 (--slow-max-log2)"),
      synthetic_ok(2, f, 18, "harris3", 15e-6),
      synthetic_ok(2, f, 20, "good", 10.2e-6), // 2 %
      synthetic_ok(2, f, 20, "CUB", 10.1e-6),  // 1 %
      synthetic_not_ok(2, f, 22, "good", "WRONG", "expected 1, got 2"),
      synthetic_ok(2, f, 24, "harris0", 100e-6), // no ok run 1 row to compare with
  };
  rows[8].r.cold.stats.median = 100e-6; // a WRONG row's median is never compared
  bool pass = false;
  const std::string md = repeat_report(rows, 2, pass);
  INFO(md);
  CHECK(has_line(md, "## Run-to-run agreement (cold medians, run 1 vs later runs)"));
  CHECK(has_line(md, "| run | dtype | n | variant | run 1 us | this run us | difference % |"));
  CHECK(has_line(md, "| 2 | float32 | 2^18 | harris3 | 10.00 | 15.00 | 50.00 |"));
  CHECK(has_line(md, "| 2 | float32 | 2^20 | good | 10.00 | 10.20 | 2.00 |"));
  CHECK(has_line(md, "| 2 | float32 | 2^20 | CUB | 10.00 | 10.10 | 1.00 |"));
  CHECK(md.find("2^22") == std::string::npos);
  CHECK(md.find("harris0") == std::string::npos);
  CHECK(has_line(md, "Largest difference for n >= 2^20 over 2 runs: 2.00 % (float32 2^20 good): "
                     "PASS (limit 3 %)"));
  CHECK(pass);
}

namespace {

// repeat_report over rows of `runs` runs prints the row and the verdict given, and passes or not.
void check_repeat(const std::vector<table_row> &rows, int runs, const std::string &row,
                  const std::string &verdict, bool passes) {
  bool pass = !passes; // repeat_report must set it either way
  const std::string md = repeat_report(rows, runs, pass);
  INFO(md);
  if (!row.empty())
    CHECK(has_line(md, row));
  CHECK(has_line(md, "Largest difference for n >= 2^20 over " + std::to_string(runs) +
                         " runs: " + verdict + " (limit 3 %)"));
  CHECK(pass == passes);
}

} // namespace

TEST_CASE("repeat_report: one row over 3 % at n >= 2^20 fails", "[bench][report][repeat]") {
  const auto f = dtype::float32, i = dtype::int32;
  check_repeat({synthetic_ok(1, f, 20, "good", 10e-6), synthetic_ok(1, i, 24, "good", 10e-6),
                synthetic_ok(2, f, 20, "good", 10.2e-6),
                synthetic_ok(2, i, 24, "good", 10.4e-6)}, // 4 %
               2, "| 2 | int32 | 2^24 | good | 10.00 | 10.40 | 4.00 |",
               "4.00 % (int32 2^24 good): FAIL", false);
}

TEST_CASE("repeat_report: exactly 3 % passes; a faster later run counts the same",
          "[bench][report][repeat]") {
  // 25 s and 25.75 s are exact in binary: the difference is exactly 3 %.
  const auto f = dtype::float32;
  check_repeat({synthetic_ok(1, f, 20, "good", 25.75), synthetic_ok(2, f, 20, "good", 25.0)}, 2,
               "| 2 | float32 | 2^20 | good | 25750000.00 | 25000000.00 | 3.00 |",
               "3.00 % (float32 2^20 good): PASS", true);
}

TEST_CASE("repeat_report: later runs are compared with run 1; none at n >= 2^20 passes",
          "[bench][report][repeat]") {
  const auto f = dtype::float32;
  check_repeat({synthetic_ok(1, f, 20, "good", 10e-6), synthetic_ok(2, f, 20, "good", 13e-6),
                synthetic_ok(3, f, 20, "good", 13e-6)},
               3, "| 3 | float32 | 2^20 | good | 10.00 | 13.00 | 30.00 |",
               "30.00 % (float32 2^20 good): FAIL", false);
  check_repeat({synthetic_ok(1, f, 16, "good", 10e-6), synthetic_ok(2, f, 16, "good", 20e-6)}, 2,
               "", "0.00 %: PASS", true);
}

TEST_CASE("JSON rows carry the fields of docs/results/*_bench_repeat_graph.json",
          "[bench][report][json]") {
  // The row and timing fields of h200_2026-11-22_bench_repeat_graph.json; that file replaced
  // each samples_s array by its count ("samples", see its "note"), the bench writes the array.
  const std::set<std::string> row_fields{"run",    "dtype",  "n",        "variant",
                                         "label",  "launch", "launches", "status",
                                         "reason", "cold",   "hot"};
  const std::set<std::string> timing_fields{"samples_s", "median_s",   "min_s",
                                            "mean_s",    "rel_stddev", "stopped"};
  const auto keys = [](const nlohmann::json &j) {
    std::set<std::string> k;
    for (const auto &[key, value] : j.items()) k.insert(key);
    return k;
  };

  const table_row ok = synthetic_ok(2, dtype::int32, 20, "good", 10e-6, 8e-6, "ept_16");
  const nlohmann::json j = to_json(ok);
  INFO(j.dump(1));
  CHECK(keys(j) == row_fields);
  CHECK(keys(j["cold"]) == timing_fields);
  CHECK(keys(j["hot"]) == timing_fields);
  CHECK(j["run"] == 2);
  CHECK(j["dtype"] == "int32");
  CHECK(j["n"] == 1048576);
  CHECK(j["variant"] == "good");
  CHECK(j["label"] == "synthetic.good");
  CHECK(j["launch"] == "ept_16");
  CHECK(j["launches"] == 2);
  CHECK(j["status"] == "ok");
  CHECK(j["reason"] == "");
  CHECK(j["cold"]["median_s"] == 10e-6);
  CHECK(j["cold"]["samples_s"].size() == 3);
  CHECK(j["cold"]["rel_stddev"] == 0.005);
  CHECK(j["cold"]["stopped"] == "converged");
  CHECK(j["hot"]["median_s"] == 8e-6);
  CHECK(j["hot"]["stopped"] == "max_samples");

  // no hot samples: no "hot"; a row that is not ok has no timings at all
  CHECK_FALSE(to_json(synthetic_ok(1, dtype::float32, 20, "harris3", 40e-6)).contains("hot"));
  const nlohmann::json skipped = to_json(synthetic_not_ok(
      1, dtype::float32, 30, "harris0", "skipped", "n > 2^28 (--slow-max-log2)", "mb_64"));
  CHECK(keys(skipped) == std::set<std::string>{"run", "dtype", "n", "variant", "label", "launch",
                                               "launches", "status", "reason"});
  CHECK(skipped["n"] == 1073741824);
  CHECK(skipped["status"] == "skipped");
  CHECK(skipped["reason"] == "n > 2^28 (--slow-max-log2)");
  CHECK(skipped["launches"] == 0);
}

TEST_CASE("the JSON document: device, date, command, peak, ceiling and every row in order",
          "[bench][report][json]") {
  options o;
  o.command = "reducetune-bench --sizes 20:24:2 --repeat 2 (synthetic)";
  const auto rows = synthetic_table_rows();
  const nlohmann::json j = bench_json(o, synthetic_device(), synthetic_ceiling(), rows);
  INFO(j.dump(1));
  std::set<std::string> top;
  for (const auto &[key, value] : j.items()) top.insert(key);
  CHECK(top == std::set<std::string>{"device", "uuid", "date", "command", "peak_bytes_per_s",
                                     "ceiling_bytes_per_s", "ceiling_bytes", "ceiling_shape",
                                     "ceiling_shapes", "rows"});
  CHECK(j["device"] == "synthetic device");
  CHECK(j["uuid"] == "GPU-00000000-0000-0000-0000-000000000000");
  CHECK(j["command"] == o.command);
  CHECK(j["peak_bytes_per_s"] == 256e9);
  CHECK(j["ceiling_bytes_per_s"] == 838.8608e9);
  CHECK(j["ceiling_bytes"] == 4ULL << 30);
  CHECK(j["ceiling_shape"] == "even-share 256x8");
  REQUIRE(j["ceiling_shapes"].size() == 2);
  CHECK(j["ceiling_shapes"][0]["shape"] == "grid-stride 256x4");
  CHECK(j["ceiling_shapes"][0]["bytes_per_s"] == 800e9);
  CHECK(std::regex_match(j["date"].get<std::string>(),
                         std::regex{R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)"}));
  REQUIRE(j["rows"].size() == rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) CHECK(j["rows"][k] == to_json(rows[k]));

  // written with one space of indentation and a final newline; an unwritable path throws
  const auto dir =
      std::filesystem::temp_directory_path() / ("rt-bench-report-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "bench.json").string();
  write_json(path, j);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  CHECK(bytes == j.dump(1) + "\n");
  CHECK(nlohmann::json::parse(bytes) == j);
  CHECK_THROWS_AS(write_json((dir / "missing" / "bench.json").string(), j), error);

  // emit() before the end (final = false) writes --out only
  o.out = (dir / "bench.md").string();
  emit(o, "# synthetic report\n", false);
  std::ifstream md(o.out, std::ios::binary);
  CHECK(std::string{std::istreambuf_iterator<char>(md), {}} == "# synthetic report\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("header and protocol: peak, ceiling and the stopping rule", "[bench][report]") {
  options o;
  o.command = "reducetune-bench (synthetic)";
  const auto d = synthetic_device();
  const ceiling_result ceiling = synthetic_ceiling();
  const std::string h = header(o, d, &ceiling);
  INFO(h);
  CHECK(has_line(h, "# reducetune-bench on synthetic device"));
  CHECK(has_line(h, "- device: synthetic device (sm_90, 132 SMs, L2 50 MiB, 1024-bit bus, memory "
                    "clock 1000 MHz), GPU-00000000-0000-0000-0000-000000000000"));
  CHECK(has_line(h, "- driver: CUDA 13.0; toolkit (runtime, NVRTC): 12.9"));
  CHECK(has_line(h, "- command: `reducetune-bench (synthetic)`"));
  CHECK(has_line(h, "- theoretical peak (2 x memory clock x bus width / 8): 256.0 GB/s"));
  CHECK(has_line(h, "- measured streaming ceiling (the fastest of 2 read-only kernels of 16-byte "
                    "loads over 4.00 GiB, median of 7 cold samples, measured once): 838.9 GB/s = "
                    "327.7 % of peak, by `even-share 256x8`; every shape: grid-stride 256x4 "
                    "800.0, even-share 256x8 838.9 GB/s"));
  CHECK(header(o, d, nullptr).find("measured streaming ceiling") == std::string::npos);

  rules r;
  r.graph = true;
  r.cold.min_samples = 10;
  r.cold.max_samples = 500;
  r.cold.max_noise = 0.01;
  r.cold.time_cap_s = 0.3;
  r.cold.min_time_s = 0.002;
  r.hot.time_cap_s = 0.1;
  const std::string p = protocol_text(o, r);
  INFO(p);
  CHECK(p.find("Stopping rule: at least 10 samples adding up to at least 2 ms, stop at 1 % noise (relative stddev) or after "
               "0.3 s (hot: 0.1 s), at most 500 samples") != std::string::npos);
  CHECK(p.find("replayed as a CUDA graph") != std::string::npos);
  r.graph = false;
  CHECK(protocol_text(o, r).find("no CUDA graph (--no-graph)") != std::string::npos);
  CHECK(has_line(p, "- harris0..harris2 (interleaved addressing: the slow seeds) are measured up "
                    "to n = 2^28 only (--slow-max-log2)"));
}
