// One main for every test executable, Catch2 v2 or v3.
//
// Test files named gpu_test_*.cpp are built with RT_GPU_TEST: when this machine has no usable
// GPU they print why and exit with 77, which CTest reports as "Skipped" (SKIP_RETURN_CODE), so
// a CPU-only run shows every GPU test as skipped with its reason instead of passing silently.
#if RT_CATCH_V3_MAIN
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#ifdef RT_GPU_TEST
#include <cuda_runtime_api.h>
#include <cstdio>
#endif

int main(int argc, char *argv[]) {
#ifdef RT_GPU_TEST
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no usable GPU on this machine (%s); GPU tests run on the device "
                "machine (scripts/device-run)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 77;
  }
#endif
  return Catch::Session().run(argc, argv);
}
