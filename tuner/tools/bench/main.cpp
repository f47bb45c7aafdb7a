// reducetune-bench: the seeds (harris0..harris6, their own launch configuration), the tunable
// family's presets (`good` first), CUB DeviceReduce and the streaming ceiling, measured in one
// process on one device, as markdown tables (and JSON).
//
//   reducetune-bench [--dtype float32,int32] [--op sum] [--sizes 10:30:2] [--repeat N]
//                    [--time-cap S] [--min-time S] [--slow-max-log2 K] [--only NAME,...]
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
// --min-time S (default 0.002): the cold samples of a row add up to at least S before the
// noise may stop them (nvbench's --min-time), so short sequences get hundreds of samples.
//
// Racy mode (--racy-trials N): runs the seed-faithful unsafe volatile warp unrolls (tunable
// warp=volatile_unsafe, seeds harris4/5/6 and reduceUnrollWarps8), their volatile_sync
// counterparts and a shuffle control N times each at every size, counting wrong results
// (integers are exact, so one lost partial shows). Under compute-sanitizer use --racy-trials 1.
//
// Every variant reuses one input and one host reference per (dtype, n) (the runner's
// prepared_workload, as evaluate() with an evaluation_cache). The check is the verifier's.
//
// This file only dispatches. The parts, in tools/bench/: options (command line), variants
// (what is measured), measure_rows (one row's measurement), rows (what passes from measuring
// to reporting), report (markdown and JSON), table_mode and racy (the two modes' loops).
#include "bench/options.hpp"
#include "bench/racy.hpp"
#include "bench/table_mode.hpp"

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"

#include <cstdio>

using namespace reducetune;

int main(int argc, char **argv) try {
  const bench::options o = bench::parse(argc, argv);
  const device_info device = query_device();
  compiler comp(template_library::from_environment());
  return o.racy_trials > 0 ? bench::run_racy(o, device, comp) : bench::run_table(o, device, comp);
} catch (const reducetune::error &e) {
  std::fprintf(stderr, "reducetune-bench: %s\n", e.what());
  return 2;
}
