// Writing reducetune-bench's report (report.hpp): the markdown header, protocol, tables and
// run-to-run agreement, and the JSON rows. Numbers are formatted with printf formats so that
// the output of the same measurements is byte for byte the same from one build to the next.
#include "bench/report.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace reducetune::bench {

namespace {

std::string fmt(const char *format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return buffer;
}

// The ceiling line: the fastest read shape, its bandwidth, and every shape's for the record.
std::string ceiling_text(const ceiling_result &c, const device_info &d) {
  std::ostringstream md;
  md << "- measured streaming ceiling (the fastest of " << c.shapes.size()
     << " read-only kernels of 16-byte loads over " << fmt("%.2f", c.bytes / double(1ULL << 30))
     << " GiB, median of " << c.cold.samples_s.size() << " cold samples, measured once): "
     << fmt("%.1f", c.bytes_per_s / 1e9) << " GB/s = "
     << fmt("%.1f", percent_of(c.bytes_per_s, d.peak_bytes_per_s())) << " % of peak, by `"
     << c.shape << "`";
  const char *sep = "; every shape: ";
  for (const auto &s : c.shapes) {
    md << sep << s.shape << " " << fmt("%.1f", s.bytes_per_s / 1e9);
    sep = ", ";
  }
  md << " GB/s\n";
  return md.str();
}

} // namespace

std::string header(const options &o, const device_info &d, const ceiling_result *ceiling) {
  std::ostringstream md;
  md << "# reducetune-bench on " << d.name << "\n\n";
  md << "- device: " << d.name << " (sm_" << d.arch() << ", " << d.sm_count << " SMs, L2 "
     << d.l2_bytes / (1 << 20) << " MiB, " << d.bus_width_bits << "-bit bus, memory clock "
     << d.memory_clock_khz / 1000 << " MHz), " << d.uuid << "\n";
  md << "- date: " << utc_now() << "\n";
  md << "- driver: CUDA " << version_text(d.driver_version)
     << "; toolkit (runtime, NVRTC): " << version_text(d.runtime_version) << "\n";
  md << "- command: `" << o.command << "`\n";
  md << "- theoretical peak (2 x memory clock x bus width / 8): "
     << fmt("%.1f", d.peak_bytes_per_s() / 1e9) << " GB/s\n";
  if (ceiling && ceiling->bytes_per_s > 0) md << ceiling_text(*ceiling, d);
  return md.str();
}

std::string protocol_text(const options &o, const rules &r) {
  std::ostringstream md;
  md << "- workload: " << to_string(o.op) << " over uniform data (seed " << workload{}.seed
     << "), every result verified before and after sampling against the host reference "
        "(integers exact, floats within the bound of verify/tolerance.hpp); WRONG rows are "
        "never ranked\n";
  md << "- timing: CUDA events around each launch sequence; **cold** (L2 flushed before each "
        "sample) is the headline, hot (back to back) an extra column. Stopping rule: at least "
     << r.cold.min_samples << " samples adding up to at least " << r.cold.min_time_s * 1e3
     << " ms, stop at " << r.cold.max_noise * 100
     << " % noise (relative stddev) or after " << r.cold.time_cap_s
     << " s (hot: " << r.hot.time_cap_s << " s), at most " << r.cold.max_samples << " samples\n";
  md << "- each sample's stream is held by a gate kernel until the whole launch sequence is "
        "enqueued (GPU time, not the host's launch rate)"
     << (r.graph ? "; each sequence is captured once and replayed as a CUDA graph"
                 : "; direct launches, no CUDA graph (--no-graph)")
     << "; inputs up to 32 MiB are kept in "
        "several copies at different addresses (up to 8, 256 MiB in all) and samples rotate "
        "over them, every copy verified\n";
  md << "- GB/s = bytes read / cold median; x CUB = t_CUB / t_variant (> 1: faster than CUB)\n";
  md << "- harris0..harris2 (interleaved addressing: the slow seeds) are measured up to n = 2^"
     << o.slow_max_log2 << " only (--slow-max-log2)\n";
  return md.str();
}

std::string table(const std::vector<table_row> &rows, int run, dtype t, const device_info &d,
                  double ceiling) {
  std::ostringstream md;
  md << "\n## " << to_string(t) << " (run " << run << ")\n\n";
  md << "| n | variant | launch | median us (cold) | GB/s | % peak | % ceiling | x CUB | "
        "hot us | noise % | samples | status |\n";
  md << "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
  std::map<int, double> cub_time;
  for (const auto &r : rows)
    if (r.run == run && r.type == t && r.name == "CUB" && r.r.status == "ok")
      cub_time[r.log2n] = r.r.cold.stats.median;
  std::map<int, const table_row *> best;
  for (const auto &r : rows) {
    if (r.run != run || r.type != t) continue;
    const std::uint64_t bytes = (1ULL << r.log2n) * size_of(t);
    md << "| 2^" << r.log2n << " | " << r.name << (r.flag.empty() ? "" : " (racy)") << " | "
       << r.launch << " | ";
    if (r.r.status != "ok") {
      md << "| | | | | | | | " << r.r.status << ": " << r.r.reason.substr(0, 160) << " |\n";
      continue;
    }
    const double t_med = r.r.cold.stats.median;
    const double bw = bandwidth_bytes_per_s(bytes, t_med);
    const auto cub = cub_time.find(r.log2n);
    md << fmt("%.2f", t_med * 1e6) << " | " << fmt("%.1f", bw / 1e9) << " | "
       << fmt("%.1f", percent_of(bw, d.peak_bytes_per_s())) << " | "
       << (ceiling > 0 ? fmt("%.1f", percent_of(bw, ceiling)) : "") << " | "
       << (cub != cub_time.end() ? fmt("%.3f", cub->second / t_med) : "") << " | "
       << (r.r.hot.samples_s.empty() ? "" : fmt("%.2f", r.r.hot.stats.median * 1e6)) << " | "
       << fmt("%.2f", r.r.cold.stats.rel_stddev * 100) << " | " << r.r.cold.samples_s.size()
       << " | ok |\n";
    if (r.name != "CUB" && (!best[r.log2n] || t_med < best[r.log2n]->r.cold.stats.median))
      best[r.log2n] = &r;
  }
  md << "\nFastest verified variant per n (CUB excluded; cold median):\n\n";
  md << "| n | variant | median us | x CUB |\n|---|---|--:|--:|\n";
  for (const auto &[k, r] : best) {
    const auto cub = cub_time.find(k);
    md << "| 2^" << k << " | " << r->name << " | " << fmt("%.2f", r->r.cold.stats.median * 1e6)
       << " | " << (cub != cub_time.end() ? fmt("%.3f", cub->second / r->r.cold.stats.median) : "")
       << " |\n";
  }
  return md.str();
}

// Run 1 against each later run: the relative difference of cold medians per row.
std::string repeat_report(const std::vector<table_row> &rows, int runs, bool &pass) {
  std::ostringstream md;
  double worst = 0;
  std::string worst_row;
  std::map<std::tuple<dtype, int, std::string>, double> first;
  for (const auto &r : rows)
    if (r.run == 1 && r.r.status == "ok") first[{r.type, r.log2n, r.name}] = r.r.cold.stats.median;
  md << "\n## Run-to-run agreement (cold medians, run 1 vs later runs)\n\n";
  md << "| run | dtype | n | variant | run 1 us | this run us | difference % |\n";
  md << "|--:|---|---|---|--:|--:|--:|\n";
  for (const auto &r : rows) {
    if (r.run == 1 || r.r.status != "ok") continue;
    const auto it = first.find({r.type, r.log2n, r.name});
    if (it == first.end()) continue;
    const double a = it->second, b = r.r.cold.stats.median;
    const double diff = 100.0 * std::abs(b - a) / std::min(a, b);
    md << "| " << r.run << " | " << to_string(r.type) << " | 2^" << r.log2n << " | " << r.name
       << " | " << fmt("%.2f", a * 1e6) << " | " << fmt("%.2f", b * 1e6) << " | "
       << fmt("%.2f", diff) << " |\n";
    if (r.log2n >= 20 && diff > worst) {
      worst = diff;
      worst_row = std::string{to_string(r.type)} + " 2^" + std::to_string(r.log2n) + " " + r.name;
    }
  }
  pass = worst <= 3.0;
  md << "\nLargest difference for n >= 2^20 over " << runs << " runs: " << fmt("%.2f", worst)
     << " %" << (worst_row.empty() ? "" : " (" + worst_row + ")") << ": "
     << (pass ? "PASS" : "FAIL") << " (limit 3 %)\n";
  return md.str();
}

nlohmann::json to_json(const table_row &r) {
  const auto timing_json = [](const timing &t) {
    return nlohmann::json{{"samples_s", t.samples_s},
                          {"median_s", t.stats.median},
                          {"min_s", t.stats.min},
                          {"mean_s", t.stats.mean},
                          {"rel_stddev", t.stats.rel_stddev},
                          {"stopped", to_string(t.stopped)}};
  };
  nlohmann::json j{
      {"run", r.run},         {"dtype", to_string(r.type)}, {"n", 1ULL << r.log2n},
      {"variant", r.name},    {"label", r.label},           {"launch", r.launch},
      {"status", r.r.status}, {"reason", r.r.reason},       {"launches", r.r.launches}};
  if (r.r.status == "ok") {
    j["cold"] = timing_json(r.r.cold);
    if (!r.r.hot.samples_s.empty()) j["hot"] = timing_json(r.r.hot);
  }
  return j;
}

nlohmann::json bench_json(const options &o, const device_info &d, const ceiling_result &ceiling,
                          const std::vector<table_row> &rows) {
  nlohmann::json j{{"device", d.name},
                   {"uuid", d.uuid},
                   {"date", utc_now()},
                   {"command", o.command},
                   {"peak_bytes_per_s", d.peak_bytes_per_s()},
                   {"ceiling_bytes_per_s", ceiling.bytes_per_s},
                   {"ceiling_bytes", ceiling.bytes},
                   {"ceiling_shape", ceiling.shape}};
  for (const auto &s : ceiling.shapes)
    j["ceiling_shapes"].push_back({{"shape", s.shape}, {"bytes_per_s", s.bytes_per_s}});
  for (const auto &row : rows) j["rows"].push_back(to_json(row));
  return j;
}

void write_json(const std::string &path, const nlohmann::json &j) {
  std::ofstream f(path);
  f << j.dump(1) << "\n";
  if (!f) throw error("cannot write " + path);
}

void emit(const options &o, const std::string &markdown, bool final) {
  if (final) {
    std::fputs(markdown.c_str(), stdout);
    std::fflush(stdout);
  }
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    f << markdown;
    if (!f) throw error("cannot write " + o.out);
  }
}

} // namespace reducetune::bench
