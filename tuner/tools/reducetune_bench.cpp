// reducetune-bench: the seeds (harris0..harris6, their own launch configuration), the tunable
// family's presets (`good` first), CUB DeviceReduce and the streaming ceiling, measured in one
// process on one device, as markdown tables (and JSON).
//
//   reducetune-bench [--dtype float32,int32] [--op sum] [--sizes 10:30:2] [--repeat N]
//                    [--time-cap S] [--slow-max-log2 K] [--only NAME,...]
//                    [--out FILE.md] [--json FILE]
//   reducetune-bench --racy-trials N [--racy-sizes 10,16,20,24] [--dtype …] [--only …]
//
// Table mode: for every dtype and n = 2^lo, 2^(lo+step), …, 2^hi, one row per variant: median
// of the cold samples (L2 flushed before each; the headline), GB/s = bytes read / that median,
// % of the theoretical peak, % of the measured ceiling, × CUB = t_CUB / t_variant (> 1: faster
// than CUB), the hot median (back to back) and the noise. Every result is verified before and
// after sampling; a wrong one prints WRONG and is never ranked. --repeat 2 runs the whole table
// twice in the same process and prints each row's difference of medians and, for n ≥ 2^20,
// the largest one with PASS (≤ 3 %) or FAIL.
//
// Racy mode (--racy-trials N): runs the seed-faithful unsafe volatile warp unrolls (tunable
// warp=volatile_unsafe, seeds harris4/5/6 and reduceUnrollWarps8), their volatile_sync
// counterparts and a shuffle control N times each at every size, counting wrong results
// (integers are exact, so one lost partial shows). Under compute-sanitizer use --racy-trials 1.
//
// Every variant reuses one input and one host reference per (dtype, n) (the runner's
// prepared_workload, as evaluate() with an evaluation_cache). The check is the verifier's.
#include "reducetune/baseline/cub_reduce.hpp"
#include "reducetune/baseline/streaming_ceiling.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/graph_replay.hpp"
#include "reducetune/measure/launch_sequence.hpp"
#include "reducetune/measure/prepared_workload.hpp"
#include "reducetune/measure/sampler.hpp"
#include "reducetune/measure/worker_protocol.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/verify.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace reducetune;

namespace {
// Progress lines on stderr carry the time since start, so a slow size shows where time goes.
const auto bench_start = std::chrono::steady_clock::now();
} // namespace

namespace {

struct options {
  std::vector<dtype> dtypes{dtype::float32, dtype::int32};
  reduce_op op = reduce_op::sum;
  int lo = 10, hi = 30, step = 2;
  int repeat = 1;
  bool graph = true; // time CUDA-graph replays of each sequence (--no-graph: direct launches)
  double time_cap_s = 0.3;
  int slow_max_log2 = 28; // harris0..2 (interleaved addressing) above this are skipped
  std::vector<std::string> only;
  std::string out, json_path;
  std::size_t racy_trials = 0;
  std::vector<int> racy_sizes{10, 16, 20, 24};
  std::string command;
};

[[noreturn]] void usage(const std::string &problem) {
  std::fprintf(stderr,
               "reducetune-bench: %s\n"
               "usage: reducetune-bench [--dtype float32,int32] [--op sum] [--sizes 10:30:2]\n"
               "         [--repeat N] [--no-graph] [--time-cap S] [--slow-max-log2 K]\n"
               "         [--only NAME,...]\n"
               "         [--out FILE.md] [--json FILE]\n"
               "       reducetune-bench --racy-trials N [--racy-sizes 10,16,20,24] [--dtype ...]\n"
               "         [--only NAME,...] [--out FILE.md]\n",
               problem.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, sep);)
    if (!p.empty()) parts.push_back(p);
  return parts;
}

int to_int(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end) usage(flag + " needs an integer, not '" + text + "'");
  return static_cast<int>(v);
}

options parse(int argc, char **argv) {
  options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string{argv[i]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--dtype") {
      o.dtypes.clear();
      for (const auto &t : split(next(), ',')) o.dtypes.push_back(dtype_from_string(t));
    } else if (a == "--op") {
      o.op = op_from_string(next());
    } else if (a == "--sizes") {
      const auto parts = split(next(), ':');
      if (parts.size() < 2 || parts.size() > 3) usage("--sizes needs lo:hi[:step] (log2)");
      o.lo = to_int(a, parts[0]);
      o.hi = to_int(a, parts[1]);
      o.step = parts.size() == 3 ? to_int(a, parts[2]) : 1;
      if (o.lo < 0 || o.hi > 34 || o.lo > o.hi || o.step < 1) usage("--sizes out of range");
    } else if (a == "--no-graph") {
      o.graph = false;
    } else if (a == "--repeat") {
      o.repeat = std::max(1, to_int(a, next()));
    } else if (a == "--time-cap") {
      o.time_cap_s = std::atof(next().c_str());
    } else if (a == "--slow-max-log2") {
      o.slow_max_log2 = to_int(a, next());
    } else if (a == "--only") {
      o.only = split(next(), ',');
    } else if (a == "--out") {
      o.out = next();
    } else if (a == "--json") {
      o.json_path = next();
    } else if (a == "--racy-trials") {
      o.racy_trials = static_cast<std::size_t>(std::max(1, to_int(a, next())));
    } else if (a == "--racy-sizes") {
      o.racy_sizes.clear();
      for (const auto &s : split(next(), ',')) o.racy_sizes.push_back(to_int(a, s));
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  return o;
}

// ---- what is measured ----------------------------------------------------------------------

struct bench_variant {
  std::string name;  // "harris3", "good", "CUB"
  std::string label; // the variant label (CUB: "cub::DeviceReduce")
  std::string launch;
  std::string flag;  // a parameter value's warning (racy), "" when none
  bool slow = false; // harris0..2: capped at --slow-max-log2
  launch_plan plan;
  std::shared_ptr<const compiled_program> program; // null for CUB
  std::shared_ptr<loaded_module> module;
};

bool wanted(const options &o, const std::string &name) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
}

std::string flag_of(const family &f, const variant &v) {
  std::size_t k = 0;
  for (const auto &p : f.parameters) {
    if (p.kind != parameter_kind::compile) continue;
    if (const auto idx = p.index_of(v.values[k]); idx && !p.values[*idx].flag.empty())
      return p.values[*idx].flag;
    ++k;
  }
  return "";
}

// The variant with one compile parameter changed (the racy mode's volatile_* counterparts).
variant with_value(const family &f, variant v, const std::string &name, const value &x) {
  std::size_t k = 0;
  for (const auto &p : f.parameters) {
    if (p.kind != parameter_kind::compile) continue;
    if (p.name == name) v.values[k] = x;
    ++k;
  }
  return v;
}

struct variant_builder {
  const device_info &device;
  const device_limits limits;
  compiler &comp;
  std::vector<bench_variant> out;
  std::vector<compile_request> requests;

  void add(const std::string &name, const family &f, const variant &v, const launch_config &c) {
    const search_space space(f, v.type, v.op, limits);
    if (const auto why = space.check(v, c); !why) {
      std::fprintf(stderr, "reducetune-bench: %s (%s) is not a valid point here: %s\n",
                   name.c_str(), to_label(f, v).c_str(), why.reasons().c_str());
      return;
    }
    bench_variant b;
    b.name = name;
    b.label = to_label(f, v);
    b.launch = to_label(f, c);
    b.flag = flag_of(f, v);
    b.slow = name == "harris0" || name == "harris1" || name == "harris2";
    b.plan = space.plan_launch(v, c);
    out.push_back(std::move(b));
    requests.push_back(request_for(f, v, device.arch()));
  }

  // Compiles everything in one batch and loads it; a variant that fails to compile is dropped.
  std::vector<bench_variant> finish() {
    const auto outcomes = comp.compile_batch(requests);
    std::vector<bench_variant> ready;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!outcomes[i].program) {
        std::fprintf(stderr, "reducetune-bench: %s does not compile:\n%s\n", out[i].name.c_str(),
                     outcomes[i].error.c_str());
        continue;
      }
      out[i].program = outcomes[i].program;
      out[i].module = std::make_shared<loaded_module>(*out[i].program);
      ready.push_back(std::move(out[i]));
    }
    return ready;
  }
};

std::optional<preset_point> preset_named(const search_space &s, const std::string &name) {
  for (auto &p : s.presets())
    if (p.name == name) return p;
  return std::nullopt;
}

std::vector<bench_variant> table_variants(const options &o, const device_info &device,
                                          compiler &comp, dtype t) {
  variant_builder b{device, limits_of(device), comp, {}, {}};
  const family seeds = family::load(comp.library(), "seeds");
  const search_space ss(seeds, t, o.op, b.limits);
  for (int k = 0; k <= 6; ++k) {
    const std::string name = "harris" + std::to_string(k);
    if (const auto p = preset_named(ss, name); p && wanted(o, name))
      b.add(name, seeds, p->point, p->launch);
  }
  const family tunable = family::load(comp.library(), "tunable");
  const search_space ts(tunable, t, o.op, b.limits);
  auto presets = ts.presets();
  std::stable_partition(presets.begin(), presets.end(),
                        [](const preset_point &p) { return p.name == "good"; });
  for (const auto &p : presets)
    if (wanted(o, p.name)) b.add(p.name, tunable, p.point, p.launch);
  return b.finish();
}

std::vector<bench_variant> racy_variants(const options &o, const device_info &device,
                                         compiler &comp, dtype t) {
  variant_builder b{device, limits_of(device), comp, {}, {}};
  const family tunable = family::load(comp.library(), "tunable");
  const search_space ts(tunable, t, o.op, b.limits);
  if (const auto good = preset_named(ts, "good")) {
    const auto add = [&](const std::string &name, const variant &v) {
      if (wanted(o, name)) b.add(name, tunable, v, good->launch);
    };
    add("good", good->point); // shuffle: the control
    for (const std::string strategy : {"tree", "warp_partials"})
      for (const std::string warp : {"volatile_unsafe", "volatile_sync"}) {
        const variant v = with_value(tunable, with_value(tunable, good->point, "warp", warp),
                                     "block_strategy", strategy);
        add("good." + warp + "." + strategy, v);
      }
  }
  if (const auto p = preset_named(ts, "harris6_point")) {
    if (wanted(o, "harris6_point")) b.add("harris6_point", tunable, p->point, p->launch);
    if (wanted(o, "harris6_point.volatile_sync"))
      b.add("harris6_point.volatile_sync", tunable,
            with_value(tunable, p->point, "warp", std::string{"volatile_sync"}), p->launch);
  }
  const family seeds = family::load(comp.library(), "seeds");
  const search_space ss(seeds, t, o.op, b.limits);
  for (const std::string name :
       {"harris4", "harris5", "harris6", "reduceUnrollWarps8", "harris5_shfl"})
    if (const auto p = preset_named(ss, name); p && wanted(o, name))
      b.add(name, seeds, p->point, p->launch);
  return b.finish();
}

// ---- one input, its reference, and the measurement of one row ------------------------------

// One (dtype, n) input shared by every row: the runner's prepared workload (input and
// reference made once) and a result slot for CUB.
struct prepared_input {
  prepared_workload load;
  device_buffer result; // CUB writes here
  dtype type;
  std::uint64_t n;

  prepared_input(dtype t, reduce_op o, std::uint64_t count)
      : load(workload{t, o, count, data_pattern::uniform}), result(size_of(t)), type(t), n(count) {}
  [[nodiscard]] verdict check(const void *device_result) { return load.check(device_result, {}); }
};

struct row_result {
  std::string status = "ok"; // ok, WRONG, FAILED, skipped
  std::string reason;
  timing cold, hot;
  unsigned launches = 0;
};

struct rules {
  stopping_rule cold, hot;
  bool graph = false;
};

// Runs copy i of the input (prepared_workload rotates over copies at different addresses).
using copy_runner = std::function<void(cudaStream_t, std::size_t)>;
using copy_result = std::function<const void *(std::size_t)>;

// Every copy once, each result checked; the first wrong verdict, or an ok one.
verdict run_every_copy(const copy_runner &run, const copy_result &result, prepared_input &in,
                       stream &s) {
  verdict v;
  for (std::size_t i = 0; i < in.load.copies(); ++i) {
    run(s.get(), i);
    s.synchronize();
    v = in.check(result(i));
    if (!v.ok) return v;
  }
  return v;
}

row_result measure(const copy_runner &direct, const copy_result &result, prepared_input &in,
                   stream &s, l2_flush &flush, const rules &r) {
  std::unique_ptr<graph_replay> graphs;
  if (r.graph) graphs = std::make_unique<graph_replay>(direct, in.load.copies(), s.get());
  const copy_runner via_graph = [&](cudaStream_t st, std::size_t i) { graphs->launch(st, i); };
  const copy_runner &run = graphs ? via_graph : direct;
  row_result out;
  if (const verdict v = run_every_copy(run, result, in, s); !v.ok) {
    out.status = "WRONG";
    out.reason = "expected " + v.expected + ", got " + v.got + ": " + v.reason;
    return out;
  }
  std::size_t next = 0;
  const auto enqueue = [&](cudaStream_t st) { run(st, next++ % in.load.copies()); };
  out.cold = sample(enqueue, s.get(), &flush, r.cold);
  out.hot = sample(enqueue, s.get(), nullptr, r.hot);
  if (const verdict v = run_every_copy(run, result, in, s); !v.ok) {
    out.status = "WRONG";
    out.reason = "after sampling: expected " + v.expected + ", got " + v.got;
  }
  return out;
}

row_result measure_variant(bench_variant &v, prepared_input &in, stream &s, l2_flush &flush,
                           const rules &r) {
  try {
    std::vector<std::unique_ptr<launch_sequence>> seqs;
    for (std::size_t i = 0; i < in.load.copies(); ++i)
      seqs.push_back(
          std::make_unique<launch_sequence>(*v.module, v.plan, in.type, in.load.input(i), in.n));
    row_result out = measure([&](cudaStream_t st, std::size_t i) { seqs[i]->enqueue(st); },
                             [&](std::size_t i) { return seqs[i]->result(); }, in, s, flush, r);
    out.launches = seqs.front()->launches();
    return out;
  } catch (const error &e) {
    row_result out;
    out.status = "FAILED";
    out.reason = e.what();
    return out;
  }
}

row_result measure_cub(cub_reduce &cub, prepared_input &in, stream &s, l2_flush &flush,
                       const rules &r) {
  try {
    row_result out =
        measure([&](cudaStream_t st,
                    std::size_t i) { cub.enqueue(in.load.input(i), in.result.data(), in.n, st); },
                [&](std::size_t) { return in.result.data(); }, in, s, flush, r);
    out.launches = 1;
    return out;
  } catch (const error &e) {
    row_result out;
    out.status = "FAILED";
    out.reason = e.what();
    return out;
  }
}

// ---- the table -----------------------------------------------------------------------------

struct table_row {
  int run;
  dtype type;
  int log2n;
  std::string name, label, launch, flag;
  row_result r;
};

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

std::string header(const options &o, const device_info &d, double ceiling, std::size_t samples) {
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
  if (ceiling > 0)
    md << "- measured streaming ceiling (16-byte vector reads of 1 GiB, median of " << samples
       << " cold samples, measured once): " << fmt("%.1f", ceiling / 1e9)
       << " GB/s = " << fmt("%.1f", percent_of(ceiling, d.peak_bytes_per_s())) << " % of peak\n";
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
     << r.cold.min_samples << " samples, stop at " << r.cold.max_noise * 100
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

// Writes the report to --out, and (final only) to stdout. Called after every size with the
// rows so far, so that a run stopped by a time limit still leaves what it measured.
void emit(const options &o, const std::string &markdown, bool final = true) {
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

int run_table(const options &o, const device_info &device, compiler &comp) {
  rules r;
  r.graph = o.graph;
  r.cold.min_samples = r.hot.min_samples = 10;
  r.cold.max_samples = r.hot.max_samples = 500;
  r.cold.max_noise = r.hot.max_noise = 0.01;
  r.cold.time_cap_s = o.time_cap_s;
  r.hot.time_cap_s = o.time_cap_s / 3;

  const std::uint64_t ceiling_bytes =
      std::min<std::uint64_t>(1ULL << 30, device.global_memory_bytes / 8);
  stopping_rule ceiling_rule = r.cold;
  ceiling_rule.time_cap_s = 1.0;
  const ceiling_result ceiling = measure_streaming_ceiling(device, ceiling_bytes, ceiling_rule);
  std::fprintf(stderr, "ceiling: %.1f GB/s\n", ceiling.bytes_per_s / 1e9);

  std::map<dtype, std::vector<bench_variant>> variants;
  for (dtype t : o.dtypes) variants[t] = table_variants(o, device, comp, t);

  stream s;
  l2_flush flush(device.l2_bytes);
  std::vector<table_row> rows;
  bool pass = true;
  const auto report = [&](bool final) {
    std::string md =
        header(o, device, ceiling.bytes_per_s, ceiling.cold.samples_s.size()) + protocol_text(o, r);
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

  if (!o.json_path.empty()) {
    nlohmann::json j{{"device", device.name},
                     {"uuid", device.uuid},
                     {"date", utc_now()},
                     {"command", o.command},
                     {"peak_bytes_per_s", device.peak_bytes_per_s()},
                     {"ceiling_bytes_per_s", ceiling.bytes_per_s}};
    for (const auto &row : rows) j["rows"].push_back(to_json(row));
    std::ofstream f(o.json_path);
    f << j.dump(1) << "\n";
    if (!f) throw error("cannot write " + o.json_path);
  }
  return pass ? 0 : 1;
}

// ---- racy mode -----------------------------------------------------------------------------

int run_racy(const options &o, const device_info &device, compiler &comp) {
  std::ostringstream md;
  md << header(o, device, 0, 0);
  md << "- mode: " << o.racy_trials
     << " runs of each variant per size, each verified on its own (uniform data; integers "
        "exact): a wrong count > 0 is a race observed\n\n";
  md << "| dtype | variant | label | n | runs | wrong | first wrong (expected -> got) |\n";
  md << "|---|---|---|---|--:|--:|---|\n";
  stream s;
  std::size_t total_wrong = 0;
  for (dtype t : o.dtypes) {
    auto variants = racy_variants(o, device, comp, t);
    for (int k : o.racy_sizes) {
      prepared_input in(t, o.op, 1ULL << k);
      for (auto &v : variants) {
        std::size_t wrong = 0;
        std::string example, failed;
        try {
          launch_sequence seq(*v.module, v.plan, t, in.load.input(), in.n);
          for (std::size_t i = 0; i < o.racy_trials; ++i) {
            seq.enqueue(s.get());
            s.synchronize();
            if (const verdict vd = in.check(seq.result()); !vd.ok) {
              ++wrong;
              if (example.empty()) example = vd.expected + " -> " + vd.got;
            }
          }
        } catch (const error &e) {
          failed = std::string{"FAILED: "} + e.what();
        }
        total_wrong += wrong;
        md << "| " << to_string(t) << " | " << v.name << (v.flag.empty() ? "" : " (racy)") << " | "
           << v.label << " | 2^" << k << " | " << o.racy_trials << " | "
           << (failed.empty() ? std::to_string(wrong) : failed.substr(0, 160)) << " | " << example
           << " |\n";
        std::fprintf(stderr, "%s %s 2^%d: %zu wrong of %zu\n", to_string(t), v.name.c_str(), k,
                     wrong, o.racy_trials);
      }
    }
  }
  md << "\nTotal wrong results: " << total_wrong << "\n";
  emit(o, md.str());
  return 0;
}

} // namespace

int main(int argc, char **argv) try {
  const options o = parse(argc, argv);
  const device_info device = query_device();
  compiler comp(template_library::from_environment());
  return o.racy_trials > 0 ? run_racy(o, device, comp) : run_table(o, device, comp);
} catch (const reducetune::error &e) {
  std::fprintf(stderr, "reducetune-bench: %s\n", e.what());
  return 2;
}
