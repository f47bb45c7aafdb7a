// reducetune-bench's racy mode (--racy-trials N): runs the seed-faithful unsafe volatile warp
// unrolls (tunable warp=volatile_unsafe, seeds harris4/5/6 and reduceUnrollWarps8), their
// volatile_sync counterparts and a shuffle control N times each at every size, counting wrong
// results (integers are exact, so one lost partial shows). Under compute-sanitizer use
// --racy-trials 1.
#pragma once

#include "bench/options.hpp"

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/jit/compiler.hpp"

namespace reducetune::bench {

// Writes the markdown table of wrong counts (emit) and returns 0: a race observed is a
// finding, not a failure of the tool.
int run_racy(const options &o, const device_info &device, compiler &comp);

} // namespace reducetune::bench
