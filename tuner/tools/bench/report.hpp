// What reducetune-bench writes: the markdown report (header with the device and the measured
// ceiling, the protocol, one table per run and dtype with the fastest verified variant per n,
// and for --repeat > 1 the run-to-run agreement with its PASS/FAIL), the JSON document of
// every row, and emit(), which sends the markdown to --out and stdout. Pure functions of the
// rows (plus the clock for the date), so they are tested without a GPU
// (tests/cpp/bench/test_bench_report.cpp).
#pragma once

#include "bench/options.hpp"
#include "bench/rows.hpp"

#include "reducetune/baseline/streaming_ceiling.hpp"
#include "reducetune/cuda/device_info.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace reducetune::bench {

// The title and the device, date, driver, command, peak and (ceiling given and > 0) the
// measured-ceiling lines.
std::string header(const options &o, const device_info &d, const ceiling_result *ceiling);

// How every row was measured: workload, verification, timing, stopping rule, graph replay.
std::string protocol_text(const options &o, const rules &r);

// The table of one run and dtype (ceiling ≤ 0: the % ceiling column is left empty), then the
// fastest verified variant per n (CUB excluded). x CUB = t_CUB / t_variant.
std::string table(const std::vector<table_row> &rows, int run, dtype t, const device_info &d,
                  double ceiling);

// Run 1 against each later run: the relative difference of cold medians per row (ok rows
// only); pass is set to whether the largest one for n ≥ 2^20 is within 3 %.
std::string repeat_report(const std::vector<table_row> &rows, int runs, bool &pass);

// One row as JSON (cold and hot timings only for an ok row, hot only when it was sampled).
nlohmann::json to_json(const table_row &r);

// The whole JSON document: device, uuid, date (now), command, peak, ceiling and every row.
nlohmann::json bench_json(const options &o, const device_info &d, const ceiling_result &ceiling,
                          const std::vector<table_row> &rows);

// Writes j (one space of indentation, a newline at the end) to path; throws error on failure.
void write_json(const std::string &path, const nlohmann::json &j);

// Writes the report to --out, and (final only) to stdout. Called after every size with the
// rows so far, so that a run stopped by a time limit still leaves what it measured.
void emit(const options &o, const std::string &markdown, bool final = true);

} // namespace reducetune::bench
