// Measuring one row of reducetune-bench: prepared_input is one (dtype, n) input shared by
// every row (the runner's prepared_workload: input and reference made once, as evaluate() with
// an evaluation_cache, plus a result slot for CUB); measure_variant and measure_cub verify
// every copy of the input, take the cold and hot samples and verify again. A wrong result is
// a WRONG row, a CUDA error a FAILED one; neither throws.
#pragma once

#include "bench/rows.hpp"
#include "bench/variants.hpp"

#include "reducetune/baseline/cub_reduce.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/cuda/stream.hpp"
#include "reducetune/measure/prepared_workload.hpp"
#include "reducetune/verify/verify.hpp"

#include <cstdint>

namespace reducetune::bench {

// One (dtype, n) input shared by every row: the runner's prepared workload (input and
// reference made once) and a result slot for CUB.
struct prepared_input {
  prepared_workload load;
  device_buffer result; // CUB writes here

  prepared_input(dtype t, reduce_op o, std::uint64_t count)
      : load(workload{t, o, count, data_pattern::uniform}), result(size_of(t)) {}
  [[nodiscard]] verdict check(const void *device_result) { return load.check(device_result, {}); }
};

row_result measure_variant(bench_variant &v, prepared_input &in, stream &s, l2_flush &flush,
                           const rules &r);

row_result measure_cub(cub_reduce &cub, prepared_input &in, stream &s, l2_flush &flush,
                       const rules &r);

} // namespace reducetune::bench
