// Does a kernel that reducetune loads from NVRTC's cubin (cuModuleLoadData, cuLaunchKernel)
// start or end later than the same kernel compiled into the application? (issue 25: float32
// sum at 2^12, a single block, stays at 0.96-0.98 x CUB in the tuner's protocol after six
// minutes, while Nsight Compute times both kernels alike, 2.72 against 2.75 us; the 0.13-0.2
// us between them lie outside the kernels: docs/results/h200x4_2026-11-27_z_startup_and_small_n.)
//
// Contenders, each one launch of one block on one stream, timed in the tuner's protocol: the
// L2 flushed (a memset of twice its size), the stream held by a spin kernel until the launch
// is queued, CUDA events around the launch (so no host time is timed); and hot (no flush):
//   nvcc      launch_probe_kernel.cuh's probe_sum compiled into this program, <<<1, 256>>>
//   nvcc_drv  the same function through the driver API (cudaGetFuncBySymbol, cuLaunchKernel)
//   module    the same source compiled by NVRTC (reducetune's options: -std=c++17 -minimal),
//             cuModuleLoadData, cuLaunchKernel: reducetune's path
//   library   NVRTC's cubin through cuLibraryLoadData / cuLibraryGetKernel
//   cub       cub::DeviceReduce::Sum over the same 4096 floats
// in rounds (each contender once a round, the order rotated), the median and the minimum.
//
//   nvcc -O3 -arch=sm_90 -Iscripts/device-jobs -o launch_probe scripts/device-jobs/launch_probe.cu \
//        -lnvrtc -lcuda && ./launch_probe scripts/device-jobs/launch_probe_kernel.cuh
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "probe_common.cuh"
#include "probe_nvrtc.cuh"
#include "launch_probe_kernel.cuh"

__global__ void spin(long long cycles) {
  const long long t = clock64();
  while (clock64() - t < cycles) {
  }
}

struct contender {
  const char *name;
  std::function<void(cudaStream_t)> launch;
  std::vector<float> cold, hot;
};

static float time_one(contender &c, cudaStream_t s, cudaEvent_t a, cudaEvent_t b, void *flush,
                      size_t flush_bytes) {
  if (flush) CHECK(cudaMemsetAsync(flush, 1, flush_bytes, s));
  spin<<<1, 1, 0, s>>>(40000); // about 20 us: the launch below is queued before the GPU gets there
  CHECK(cudaEventRecord(a, s));
  c.launch(s);
  CHECK(cudaEventRecord(b, s));
  return elapsed_us(a, b);
}

int main(int argc, char **argv) {
  const std::string path = argc > 1 ? argv[1] : "scripts/device-jobs/launch_probe_kernel.cuh";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 400;
  CHECK(cudaFree(nullptr)); // the runtime's context, which the driver calls below share
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned long long n = 4096, n4 = n / 4;
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMalloc(&out, 64));
  std::vector<float> ones(n, 1.f);
  CHECK(cudaMemcpy(in, ones.data(), n * 4, cudaMemcpyHostToDevice));
  const size_t flush_bytes = 2 * size_t(prop.l2CacheSize);
  void *flush = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  void *temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, int(n)));
  CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 16)));

  const std::vector<char> cubin = nvrtc_cubin(path);
  CUmodule module;
  CUfunction f_module, f_nvcc;
  DRV(cuModuleLoadData(&module, cubin.data()));
  DRV(cuModuleGetFunction(&f_module, module, "probe_sum"));
  CUlibrary library;
  CUkernel k_library;
  DRV(cuLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  DRV(cuLibraryGetKernel(&k_library, library, "probe_sum"));
  CHECK(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t *>(&f_nvcc),
                            reinterpret_cast<const void *>(probe_sum)));
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  auto driver_launch = [&](CUfunction f, cudaStream_t s) {
    void *args[] = {const_cast<float4 **>(&in4), &out, const_cast<unsigned long long *>(&n4)};
    DRV(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr));
  };
  std::vector<contender> cs;
  cs.push_back({"nvcc", [&](cudaStream_t s) { probe_sum<<<1, 256, 0, s>>>(in4, out, n4); }});
  cs.push_back({"nvcc_drv", [&](cudaStream_t s) { driver_launch(f_nvcc, s); }});
  cs.push_back({"module", [&](cudaStream_t s) { driver_launch(f_module, s); }});
  cs.push_back({"library", [&](cudaStream_t s) {
                  driver_launch(reinterpret_cast<CUfunction>(k_library), s);
                }});
  cs.push_back({"cub", [&](cudaStream_t s) {
                  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, int(n), s));
                }});
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (auto &c : cs) // warm-up: every path loaded and launched once
    for (int i = 0; i < 5; ++i) time_one(c, s, a, b, flush, flush_bytes);
  float check = 0;
  CHECK(cudaMemcpy(&check, out, 4, cudaMemcpyDeviceToHost));
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < cs.size(); ++k) {
      contender &c = cs[(k + r) % cs.size()];
      c.cold.push_back(time_one(c, s, a, b, flush, flush_bytes));
      c.hot.push_back(time_one(c, s, a, b, nullptr, 0));
    }
  std::printf("# %s, %d rounds, n = %llu floats (sum %.0f); us between the events, the stream "
              "gated\n", prop.name, rounds, n, check);
  std::printf("%-9s %12s %9s %12s %9s\n", "contender", "cold median", "cold min", "hot median",
              "hot min");
  for (auto &c : cs)
    std::printf("%-9s %12.3f %9.3f %12.3f %9.3f\n", c.name, median_of(c.cold),
                *std::min_element(c.cold.begin(), c.cold.end()), median_of(c.hot),
                *std::min_element(c.hot.begin(), c.hot.end()));
  return 0;
}
