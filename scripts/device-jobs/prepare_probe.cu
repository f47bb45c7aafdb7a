// What a point's "prepare" costs on the GPU's host side (issue 25): in the 768-point sweep
// (docs/results/h200x4_2026-11-27_z_visible_gpus) each point spent 2.1 ms preparing, more than
// its 1.8 ms of sampling. A point's preparation (measure/evaluate.cpp measure, launch_sequence,
// sample_copies, graph_replay) is, per point: its module loaded (cuModuleLoadData), a stream
// made, and per input copy (8 at 2^16 float32, 4 at 2^24) the scratch buffers allocated (out,
// partials, ticket zeroed), a CUDA graph of the sequence captured, instantiated, launched a
// first time; then everything destroyed. Each step is timed here alone, repeated, with
// launch_probe_kernel.cuh's kernel standing in for a point's (one launch a sequence).
//
//   nvcc -O3 -arch=sm_90 -Iscripts/device-jobs -o prepare_probe scripts/device-jobs/prepare_probe.cu \
//        -lnvrtc -lcuda && ./prepare_probe scripts/device-jobs/launch_probe_kernel.cuh
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>


#include "probe_common.cuh"
#include "probe_nvrtc.cuh"

// The median microseconds of `reps` calls of f.
static double us(const std::function<void()> &f, int reps = 200) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  const std::string path = argc > 1 ? argv[1] : "scripts/device-jobs/launch_probe_kernel.cuh";
  CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::vector<char> cubin = nvrtc_cubin(path);
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, 1 << 20));
  CHECK(cudaMalloc(&out, 1 << 12));
  CUmodule m;
  CUfunction f;
  DRV(cuModuleLoadData(&m, cubin.data()));
  DRV(cuModuleGetFunction(&f, m, "probe_sum"));
  unsigned long long n4 = 1024;
  void *args[] = {&in, &out, &n4};
  auto launch = [&](cudaStream_t s) {
    DRV(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s), args, nullptr));
  };
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::printf("# %s: microseconds a call, median of 200 (host clock)\n", prop.name);
  std::printf("%-58s %8.1f\n", "cuModuleLoadData + cuModuleUnload",
              us([&] {
                CUmodule x;
                DRV(cuModuleLoadData(&x, cubin.data()));
                DRV(cuModuleUnload(x));
              }));
  // what a point does with a fresh module: its function fetched and launched once (with
  // CUDA_MODULE_LOADING=LAZY, CUDA 12's default, the function's code reaches the GPU here)
  std::printf("%-58s %8.1f\n", "load + get function + first launch + sync + unload", us([&] {
                CUmodule x;
                CUfunction g;
                DRV(cuModuleLoadData(&x, cubin.data()));
                DRV(cuModuleGetFunction(&g, x, "probe_sum"));
                DRV(cuLaunchKernel(g, 1, 1, 1, 256, 1, 1, 0, reinterpret_cast<CUstream>(s),
                                   args, nullptr));
                CHECK(cudaStreamSynchronize(s));
                DRV(cuModuleUnload(x));
              }));
  std::printf("%-58s %8.1f\n", "cudaStreamCreate + cudaStreamDestroy", us([&] {
                cudaStream_t x;
                CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
                CHECK(cudaStreamDestroy(x));
              }));
  std::printf("%-58s %8.1f\n", "cudaMalloc 4 B + cudaFree", us([&] {
                void *p;
                CHECK(cudaMalloc(&p, 4));
                CHECK(cudaFree(p));
              }));
  std::printf("%-58s %8.1f\n", "cudaMalloc 4 B + cudaMemset + cudaFree", us([&] {
                void *p;
                CHECK(cudaMalloc(&p, 4));
                CHECK(cudaMemset(p, 0, 4));
                CHECK(cudaFree(p));
              }));
  std::printf("%-58s %8.1f\n", "cudaMalloc 64 KB + cudaFree", us([&] {
                void *p;
                CHECK(cudaMalloc(&p, 1 << 16));
                CHECK(cudaFree(p));
              }));
  auto capture = [&] {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    launch(s);
    CHECK(cudaStreamEndCapture(s, &g));
    return g;
  };
  std::printf("%-58s %8.1f\n", "graph: capture one launch + destroy", us([&] {
                CHECK(cudaGraphDestroy(capture()));
              }));
  std::printf("%-58s %8.1f\n", "graph: capture + instantiate + destroy both", us([&] {
                cudaGraph_t g = capture();
                cudaGraphExec_t e;
                CHECK(cudaGraphInstantiate(&e, g, 0));
                CHECK(cudaGraphDestroy(g));
                CHECK(cudaGraphExecDestroy(e));
              }));
  std::printf("%-58s %8.1f\n", "graph: capture + instantiate + launch + sync + destroy", us([&] {
                cudaGraph_t g = capture();
                cudaGraphExec_t e;
                CHECK(cudaGraphInstantiate(&e, g, 0));
                CHECK(cudaGraphDestroy(g));
                CHECK(cudaGraphLaunch(e, s));
                CHECK(cudaStreamSynchronize(s));
                CHECK(cudaGraphExecDestroy(e));
              }));
  std::printf("%-58s %8.1f\n", "a plain launch + sync", us([&] {
                launch(s);
                CHECK(cudaStreamSynchronize(s));
              }));
  // A point at 2^16 float32 as measure() prepares it: 8 copies, each 3 buffers (one zeroed)
  // and a graph; the module and the stream once; all destroyed at the end
  std::printf("%-58s %8.1f\n", "a point's preparation, 8 copies (as above, then destroyed)",
              us(
                  [&] {
                    CUmodule x;
                    DRV(cuModuleLoadData(&x, cubin.data()));
                    cudaStream_t st;
                    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
                    std::vector<void *> bufs;
                    std::vector<cudaGraphExec_t> execs;
                    for (int c = 0; c < 8; ++c) {
                      for (int b = 0; b < 3; ++b) {
                        void *p;
                        CHECK(cudaMalloc(&p, 256));
                        bufs.push_back(p);
                      }
                      CHECK(cudaMemset(bufs.back(), 0, 4));
                      cudaGraph_t g = capture();
                      cudaGraphExec_t e;
                      CHECK(cudaGraphInstantiate(&e, g, 0));
                      CHECK(cudaGraphDestroy(g));
                      CHECK(cudaGraphLaunch(e, st));
                      execs.push_back(e);
                    }
                    CHECK(cudaStreamSynchronize(st));
                    for (auto e : execs) CHECK(cudaGraphExecDestroy(e));
                    for (auto p : bufs) CHECK(cudaFree(p));
                    CHECK(cudaStreamDestroy(st));
                    DRV(cuModuleUnload(x));
                  },
                  50));
  return 0;
}
