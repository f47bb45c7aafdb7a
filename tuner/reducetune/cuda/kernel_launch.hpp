// Launching one kernel of a reduction (docs/architecture.md, "Launch protocols"): the one
// place for the ABI every template kernel takes, five arguments (in, out, n, partials,
// ticket) of which a kernel reads the prefix it declares, and for the two device settings a
// launch may need. The runner (measure/launch_sequence) and the runtime (runtime/reducer)
// both launch through here.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace reducetune {

void launch_reduction_kernel(CUfunction kernel, unsigned grid, unsigned block, unsigned shared,
                             cudaStream_t stream, const void *in, void *out, std::uint64_t n,
                             void *partials, void *ticket);

// Dynamic shared memory above 48 KiB must be asked for per kernel.
void allow_dynamic_shared(CUfunction kernel, unsigned bytes);

// Kernels that launch kernels (dynamic parallelism): CDP2 keeps every not-yet-started device
// launch in a fixed pool (2048 by default); a child per block of a large grid overflows it
// and the extra launches silently fail, which the verifier then reports as a wrong result
// (seen at n = 2^24 on an H200). Raises the pool to fit one child per block of `grid`.
void reserve_pending_launches(std::uint64_t grid);

} // namespace reducetune
