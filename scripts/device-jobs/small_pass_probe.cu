// Is the tunable pass's own code what keeps float32 sum at 2^12 at 0.96-0.98 x CUB? (issue 25:
// after six minutes with priors every other unit reaches 0.98 x CUB; launch_probe.cu showed
// that reducetune's launch path costs nothing and that a plain single-block kernel ties CUB,
// docs/results/h200_2026-11-27_z_launch_probe.)
//
// Contenders (small_pass_kernels.cuh, compiled by NVRTC with reducetune's options and
// kernel_templates on the include path, and the same file compiled into this program by nvcc
// ("_nvcc"); each one block of 256 threads over 4096 floats, the tunable ABI), and CUB's
// DeviceReduce::Sum over the same floats. All in the tuner's gate (measure/sampler.cpp): the L2
// flushed by a memset of twice its size (cold) or not (hot), the stream held by a kernel that
// spins on a mapped host flag until the host has queued the start event, the work and the
// stop event, then released. The work is one launch (direct), or one launch of a CUDA graph
// captured from it (graph), as the tuner replays every point's and CUB's sequence
// (measure/graph_replay.hpp). In rounds (every contender once a round, the order rotated);
// the median, a trimmed mean and the minimum of each. Every contender's sum is checked.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -Iscripts/device-jobs -Ikernel_templates \
//        -o small_pass_probe scripts/device-jobs/small_pass_probe.cu -lnvrtc -lcuda
//   ./small_pass_probe scripts/device-jobs/small_pass_kernels.cuh kernel_templates [ROUNDS] [NAME...]
// NAME...: the kernels' extern "C" names to time beside the family's pass (the module's
// "tunable" and "tunable_2p"), its nvcc build and CUB; by default the last call's
// (docs/results/h200_2026-11-27_z_small_pass_probe lists each call's).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "probe_common.cuh"
#include "probe_nvrtc.cuh"
#include "small_pass_kernels.cuh"

template __global__ void
rt::tunable::pass<float, rt::op_sum, 256, 4, 4, rt::warp_strategy::shuffle,
                  rt::block_strategy::warp_partials, rt::finish::ticket>(const float *, float *,
                                                                          unsigned long long,
                                                                          float *, unsigned int *);

// The tuner's gate (cuda/stream_gate): spins until the host writes 1 to the mapped flag.
__global__ void gate(volatile int *flag) {
  while (*flag == 0) {
  }
}

struct contender {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  cudaGraphExec_t graph = nullptr;
  std::vector<float> samples[4]; // direct cold, direct hot, graph cold, graph hot
};

struct harness {
  cudaStream_t s;
  cudaEvent_t a, b;
  void *flush;
  size_t flush_bytes;
  int *flag_host, *flag_dev;

  float time_one(contender &c, bool graph, bool cold) {
    if (cold) CHECK(cudaMemsetAsync(flush, 1, flush_bytes, s));
    *const_cast<volatile int *>(flag_host) = 0;
    gate<<<1, 1, 0, s>>>(flag_dev);
    CHECK(cudaEventRecord(a, s));
    if (graph)
      CHECK(cudaGraphLaunch(c.graph, s));
    else
      c.launch(s);
    CHECK(cudaEventRecord(b, s));
    *const_cast<volatile int *>(flag_host) = 1;
    return elapsed_us(a, b);
  }
};

// The mean of the middle 80 %: resolves differences below the event clock's 32 ns tick, which
// the medians of neighbours share.
static float trimmed_mean(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const size_t cut = v.size() / 10;
  double sum = 0;
  for (size_t i = cut; i < v.size() - cut; ++i) sum += v[i];
  return float(sum / double(v.size() - 2 * cut));
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::printf("usage: %s KERNELS.cuh KERNEL_TEMPLATES_DIR [ROUNDS] [NAME...]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 400;
  CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned long long n = 4096;
  float *in = nullptr, *out = nullptr, *partials = nullptr;
  unsigned *ticket = nullptr;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMalloc(&out, 64));
  CHECK(cudaMalloc(&partials, 4096));
  CHECK(cudaMalloc(&ticket, 64));
  CHECK(cudaMemset(ticket, 0, 64));
  std::vector<float> ones(n, 1.f);
  CHECK(cudaMemcpy(in, ones.data(), n * 4, cudaMemcpyHostToDevice));
  harness h{};
  h.flush_bytes = 2 * size_t(prop.l2CacheSize);
  CHECK(cudaMalloc(&h.flush, h.flush_bytes));
  CHECK(cudaHostAlloc(&h.flag_host, 64, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&h.flag_dev, h.flag_host, 0));
  void *temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, int(n)));
  CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 16)));

  const std::string pass = "rt::tunable::pass<float, rt::op_sum, 256, 4, 4, "
                           "rt::warp_strategy::shuffle, rt::block_strategy::warp_partials, ";
  std::vector<std::string> names = {pass + "rt::finish::ticket>", pass + "rt::finish::two_pass>"};
  const std::vector<std::string> labels = {"tunable", "tunable_2p"};
  const std::vector<char> cubin =
      nvrtc_cubin(argv[1], {std::string("--include-path=") + argv[2]}, &names);
  CUmodule module;
  DRV(cuModuleLoadData(&module, cubin.data()));
  std::vector<std::pair<std::string, CUfunction>> fs;
  for (size_t i = 0; i < names.size(); ++i) {
    CUfunction f;
    DRV(cuModuleGetFunction(&f, module, names[i].c_str()));
    fs.push_back({labels[i], f});
  }
  std::vector<std::string> plain(argv + std::min(argc, 4), argv + argc);
  if (plain.empty()) plain = {"nc_vec_all", "all_seq", "all_plain", "all_pred", "tunable_one_a"};
  for (const std::string &name : plain) {
    CUfunction f;
    DRV(cuModuleGetFunction(&f, module, name.c_str()));
    fs.push_back({name, f});
  }
  std::vector<contender> cs;
  for (auto &[name, f] : fs) {
    CUfunction fn = f;
    cs.push_back({name, [&, fn](cudaStream_t s) {
                    unsigned long long nn = n;
                    void *args[] = {&in, &out, &nn, &partials, &ticket};
                    DRV(cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s),
                                       args, nullptr));
                  }});
  }
  using pass_t = void (*)(const float *, float *, unsigned long long, float *, unsigned *);
  const pass_t statics[] = {
      rt::tunable::pass<float, rt::op_sum, 256, 4, 4, rt::warp_strategy::shuffle,
                        rt::block_strategy::warp_partials, rt::finish::ticket>,
      probe_sum};
  const char *static_names[] = {"tunable_nvcc", "probe_sum_nvcc"};
  for (int k = 0; k < 1; ++k) {
    const pass_t f = statics[k];
    cs.push_back({static_names[k], [&, f](cudaStream_t s) {
                    f<<<1, 256, 0, s>>>(in, out, n, partials, ticket);
                    CHECK(cudaGetLastError());
                  }});
  }
  cs.push_back({"cub", [&](cudaStream_t s) {
                  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, int(n), s));
                }});
  CHECK(cudaStreamCreateWithFlags(&h.s, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&h.a));
  CHECK(cudaEventCreate(&h.b));
  for (auto &c : cs) { // each contender's launch captured into a graph of its own
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(h.s, cudaStreamCaptureModeThreadLocal));
    c.launch(h.s);
    CHECK(cudaStreamEndCapture(h.s, &g));
    CHECK(cudaGraphInstantiate(&c.graph, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  bool all_right = true;
  for (auto &c : cs) { // warm-up, and every contender's sum checked
    for (int i = 0; i < 5; ++i) h.time_one(c, true, true);
    CHECK(cudaMemset(out, 0, 4));
    c.launch(h.s);
    CHECK(cudaStreamSynchronize(h.s));
    float got = 0;
    CHECK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
    if (got != float(n)) {
      std::printf("%s: sum %.1f, expected %llu\n", c.name.c_str(), got, n);
      all_right = false;
    }
  }
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < cs.size(); ++k) {
      contender &c = cs[(k + r) % cs.size()];
      for (int p = 0; p < 4; ++p) c.samples[p].push_back(h.time_one(c, p >= 2, p % 2 == 0));
    }
  std::printf("# %s, %d rounds, n = %llu floats, one block of 256; us between the events\n",
              prop.name, rounds, n);
  std::printf("median / trimmed mean (middle 80 %%) / min, us\n");
  std::printf("%-14s %22s %22s %22s %22s\n", "contender", "direct cold", "direct hot",
              "graph cold", "graph hot");
  for (auto &c : cs) {
    std::printf("%-14s", c.name.c_str());
    for (auto &v : c.samples)
      std::printf("  %6.3f %6.3f %6.3f", median_of(v), trimmed_mean(v),
                  *std::min_element(v.begin(), v.end()));
    std::printf("\n");
  }
  std::printf("sums %s\n", all_right ? "all right" : "WRONG");
  return all_right ? 0 : 1;
}
