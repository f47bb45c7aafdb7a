// How fast can any kernel stream an input while writing 1/r of its bytes, against reading it
// alone? (issue 26: on the H200 every point of the short rows reads at 0.949-0.96 x the
// read-only streaming kernel, rates counting bytes read + written; on the H100 at 0.98-0.99,
// and there the same kernels without their writes read 2-2.5 % faster than that kernel:
// docs/results/h100_2026-11-28_write_stream.)
//
// One kernel, no reduction in it: a grid-stride stream of 16-byte loads, U in flight per
// thread, over tiles of BS * U vectors; for each tile the block writes BS * U * 16 / R bytes,
// contiguous, in 4-byte words (word w of the tile by thread w % BS, each thread its own loads'
// xor: no shuffles, no shared memory, coalesced stores). R = 0 writes nothing: the read-only
// stream of the same code. So the writes are the only difference between the rows of a table,
// and their byte share is a reduction's of rows of R elements (outputs of the input's type).
//
// Each configuration (BS in {256, 512}, U in {4, 8}, grids of 2-16 blocks per SM and one tile
// per block) is timed as the axis benchmark's primed rounds time a call: an untimed run, then a
// timed one between two CUDA events on an idle GPU, 15 times; the median. Per R the best
// configuration's rate (bytes read + written per second) and its ratio to R = 0's best.
//
//   nvcc -O3 -arch=sm_90 -Iscripts/device-jobs -o mix_probe scripts/device-jobs/mix_probe.cu
//   ./mix_probe [LOG2_BYTES]      (30: float32 2^28 elements, the default; 29: bfloat16 2^28)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "probe_common.cuh"

template <int BS, int U, int R>
__global__ void __launch_bounds__(BS) mixed(const uint4 *__restrict__ in, size_t tiles,
                                            unsigned *out) {
  constexpr int words = R ? BS * U * 4 / R : 0; // written per tile
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const uint4 *p = in + t * BS * U + threadIdx.x;
    uint4 x[U];
#pragma unroll
    for (int k = 0; k < U; ++k) x[k] = p[k * BS];
    unsigned v = 0;
#pragma unroll
    for (int k = 0; k < U; ++k) v ^= x[k].x ^ x[k].y ^ x[k].z ^ x[k].w;
    if constexpr (R == 0) {
      if (v == 0x9e3779b9u) out[0] = v; // never for a zero input: the loads stay
    } else {
#pragma unroll
      for (int w = threadIdx.x; w < words; w += BS) out[t * words + w] = v;
    }
  }
}

using launcher = void (*)(const uint4 *, size_t, unsigned *, int);
template <int BS, int U, int R> void launch(const uint4 *in, size_t tiles, unsigned *o, int g) {
  mixed<BS, U, R><<<g, BS>>>(in, tiles, o);
}

// Median microseconds of 15 primed calls (an untimed call before each timed one).
float primed_median_us(launcher run, const uint4 *in, size_t tiles, unsigned *out, int grid) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) run(in, tiles, out, grid);
  std::vector<float> us;
  for (int i = 0; i < 15; ++i) {
    run(in, tiles, out, grid); // untimed: the L2 as this kernel leaves it
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(a));
    run(in, tiles, out, grid);
    CHECK(cudaEventRecord(b));
    us.push_back(elapsed_us(a, b));
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return median_of(us);
}

struct best {
  double us = 1e30;
  int bs = 0, u = 0, grid = 0;
};

template <int BS, int U, int R>
void sweep(const uint4 *in, size_t bytes, unsigned *out, int sms, best &b) {
  const size_t tiles = bytes / (size_t(BS) * U * 16);
  for (int per_sm : {2, 4, 8, 16, 0}) {
    const int grid = per_sm ? per_sm * sms : int(tiles); // 0: one tile a block
    const double us = primed_median_us(launch<BS, U, R>, in, tiles, out, grid);
    if (us < b.us) b = {us, BS, U, grid};
  }
}

template <int R> best best_of(const uint4 *in, size_t bytes, unsigned *out, int sms) {
  best b;
  sweep<256, 4, R>(in, bytes, out, sms, b);
  sweep<256, 8, R>(in, bytes, out, sms, b);
  sweep<512, 4, R>(in, bytes, out, sms, b);
  sweep<512, 8, R>(in, bytes, out, sms, b);
  return b;
}

int main(int argc, char **argv) {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const double peak = theoretical_peak().gbps;
  const size_t bytes = size_t(1) << (argc > 1 ? std::atoi(argv[1]) : 30);
  uint4 *in = nullptr;
  unsigned *out = nullptr;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes / 2));
  CHECK(cudaMemset(in, 0, bytes));
  const int sms = prop.multiProcessorCount;
  std::printf("# %s: input %zu bytes, theoretical peak %.0f GB/s; primed calls, medians\n\n"
              "| r (input bytes per output byte) | us | GB/s read + written | %% of peak | "
              "x read-only rate | best shape |\n|---|---|---|---|---|---|\n",
              prop.name, bytes, peak);
  const best b0 = best_of<0>(in, bytes, out, sms);
  const double read_rate = bytes / b0.us / 1e3;
  const auto row = [&](const char *r, const best &b, size_t written) {
    const double rate = (bytes + written) / b.us / 1e3;
    std::printf("| %s | %.1f | %.0f | %.1f | %.3f | %dx%d, %d blocks |\n", r, b.us, rate,
                100 * rate / peak, rate / read_rate, b.bs, b.u, b.grid);
    std::fflush(stdout);
  };
  row("read only", b0, 0);
  row("1024", best_of<1024>(in, bytes, out, sms), bytes / 1024);
  row("128", best_of<128>(in, bytes, out, sms), bytes / 128);
  row("16", best_of<16>(in, bytes, out, sms), bytes / 16);
  row("2", best_of<2>(in, bytes, out, sms), bytes / 2);
  return 0;
}
