// The table mode's loop (table_mode.hpp): sampling rules from the options, the ceiling, the
// variants of each dtype compiled up front, then run × dtype × n rows (slow seeds above
// --slow-max-log2 recorded as skipped), with progress lines on stderr.
#include "bench/table_mode.hpp"

#include "bench/measure_rows.hpp"
#include "bench/report.hpp"
#include "bench/variants.hpp"

#include "reducetune/baseline/cub_reduce.hpp"
#include "reducetune/baseline/streaming_ceiling.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace reducetune::bench {

namespace {
// Progress lines on stderr carry the time since start, so a slow size shows where time goes.
const auto bench_start = std::chrono::steady_clock::now();
} // namespace

int run_table(const options &o, const device_info &device, compiler &comp) {
  rules r;
  r.graph = o.graph;
  r.cold.min_samples = r.hot.min_samples = protocol_min_samples;
  r.cold.max_samples = r.hot.max_samples = 500;
  r.cold.max_noise = r.hot.max_noise = protocol_max_noise;
  r.cold.time_cap_s = o.time_cap_s;
  r.cold.min_time_s = o.min_time_s;
  r.hot.time_cap_s = o.time_cap_s / 3;

  stopping_rule ceiling_rule = r.cold;
  ceiling_rule.min_time_s = 0; // each sample reads 4 GiB: ten are plenty
  ceiling_rule.time_cap_s = 1.0;
  const ceiling_result ceiling = measure_streaming_ceiling(device, 0, ceiling_rule);
  std::fprintf(stderr, "ceiling: %.1f GB/s (%s)\n", ceiling.bytes_per_s / 1e9,
               ceiling.shape.c_str());

  std::map<dtype, std::vector<bench_variant>> variants;
  for (dtype t : o.dtypes) variants[t] = table_variants(o, device, comp, t);

  stream s;
  l2_flush flush(device.l2_bytes);
  std::vector<table_row> rows;
  bool pass = true;
  const auto report = [&](bool final) {
    std::string md =
        header(o, device, &ceiling) + protocol_text(o, r);
    if (!final) md += "\n**Partial report: the run was still going when this was written.**\n";
    for (int run = 1; run <= o.repeat; ++run)
      for (dtype t : o.dtypes) md += table(rows, run, t, device, ceiling.bytes_per_s);
    if (final && o.repeat > 1) md += repeat_report(rows, o.repeat, pass);
    emit(o, md, final);
  };
  for (int run = 1; run <= o.repeat; ++run)
    for (dtype t : o.dtypes) {
      cub_reduce cub(t, o.op, 1ULL << o.hi);
      for (int k = o.lo; k <= o.hi; k += o.step) {
        const std::uint64_t n = 1ULL << k;
        std::fprintf(
            stderr, "run %d %s n=2^%d (%.0f s since start)\n", run, to_string(t), k,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - bench_start).count());
        prepared_input in(t, o.op, n);
        for (auto &v : variants[t]) {
          table_row row{run, t, k, v.name, v.label, v.launch, v.flag, {}};
          if (v.slow && k > o.slow_max_log2) {
            row.r.status = "skipped";
            row.r.reason = "n > 2^" + std::to_string(o.slow_max_log2) + " (--slow-max-log2)";
          } else {
            row.r = measure_variant(v, in, s, flush, r);
          }
          rows.push_back(std::move(row));
        }
        table_row cub_row{run, t, k, "CUB", "cub::DeviceReduce", "", "", {}};
        cub_row.r = measure_cub(cub, in, s, flush, r);
        rows.push_back(std::move(cub_row));
        report(false);
      }
    }
  report(true);

  if (!o.json_path.empty())
    write_json(o.json_path, bench_json(o, device, ceiling, rows));
  return pass ? 0 : 1;
}

} // namespace reducetune::bench
