// CUB's DeviceSegmentedReduce over a shape (outer, r, inner), as a C++ application calls it: a
// peer of the axis benchmark (python -m reducetune.benchmarks.axis), loaded with ctypes so that
// it is timed in the same rounds and on the same stream as the other contenders.
//
// Rows (inner == 1) are segments of the input itself, at offsets j * r. Columns and middle
// axes (inner > 1) are not contiguous segments: the input is read through an iterator that
// maps the segment's k-th element to in[(o * r + k) * inner + i] (what a CUB user writes to
// reduce a strided axis). CUB has one tuning policy for every GPU; its sum accumulates in the
// element type.
//
// Not built by CMake (tuner/tools/*.cpp are the tool executables): scripts/device-jobs/
// axis_bench.sh builds it with
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC tuner/tools/segmented_reduce.cu \
//     -o build/libreducetune_segmented.so
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <new>

namespace {

using seg_index = long long;

struct offset_of { // segment j begins at j * r
  seg_index r;
  __host__ __device__ seg_index operator()(seg_index j) const { return j * r; }
};

struct strided { // the t-th element of the segments, t = j * r + k, j = o * inner + i
  const float *in;
  seg_index r, inner;
  __host__ __device__ float operator()(seg_index t) const {
    const seg_index j = t / r, k = t - j * r;
    const seg_index o = j / inner, i = j - o * inner;
    return in[(o * r + k) * inner + i];
  }
};

struct plan {
  const float *in = nullptr;
  float *out = nullptr;
  seg_index outer = 0, r = 0, inner = 0;
  void *temp = nullptr;
  std::size_t temp_bytes = 0;
};

// One DeviceSegmentedReduce::Sum call; temp == nullptr asks for the scratch size.
cudaError_t sum(plan &p, cudaStream_t stream) {
  const auto segments = static_cast<int>(p.outer * p.inner);
  const auto offsets = thrust::make_transform_iterator(thrust::counting_iterator<seg_index>(0),
                                                       offset_of{p.r});
  if (p.inner == 1)
    return cub::DeviceSegmentedReduce::Sum(p.temp, p.temp_bytes, p.in, p.out, segments, offsets,
                                           offsets + 1, stream);
  const auto input = thrust::make_transform_iterator(thrust::counting_iterator<seg_index>(0),
                                                     strided{p.in, p.r, p.inner});
  return cub::DeviceSegmentedReduce::Sum(p.temp, p.temp_bytes, input, p.out, segments, offsets,
                                         offsets + 1, stream);
}

} // namespace

extern "C" {

// A plan for float32 sums of (outer, r, inner) from `in` into `out`, its scratch allocated
// once here (not in each call); nullptr when CUB or the allocation fails.
void *rt_segmented_make(const void *in, void *out, seg_index outer, seg_index r, seg_index inner) {
  auto *p = new (std::nothrow) plan{static_cast<const float *>(in), static_cast<float *>(out),
                                    outer, r, inner};
  if (p == nullptr || sum(*p, nullptr) != cudaSuccess ||
      cudaMalloc(&p->temp, p->temp_bytes > 0 ? p->temp_bytes : 1) != cudaSuccess) {
    delete p;
    return nullptr;
  }
  return p;
}

// Enqueues the reduction on `stream`; returns the cudaError_t.
int rt_segmented_run(void *handle, void *stream) {
  return static_cast<int>(sum(*static_cast<plan *>(handle), static_cast<cudaStream_t>(stream)));
}

// One lone call timed in C++ as the axis benchmark times its other C++ contenders (driver/src/
// lone_call.hpp): two events on `stream` around rt_segmented_run, the stream synchronised after.
// Writes the seconds between the events to *seconds; returns the cudaError_t.
int rt_segmented_time(void *handle, void *stream, double *seconds) {
  const auto s = static_cast<cudaStream_t>(stream);
  thread_local cudaEvent_t start = nullptr, stop = nullptr; // made once: not the call's cost
  cudaError_t e = cudaSuccess;
  if (start == nullptr && (e = cudaEventCreate(&start)) != cudaSuccess) return static_cast<int>(e);
  if (stop == nullptr && (e = cudaEventCreate(&stop)) != cudaSuccess) return static_cast<int>(e);
  float ms = 0;
  if ((e = cudaEventRecord(start, s)) != cudaSuccess ||
      (e = sum(*static_cast<plan *>(handle), s)) != cudaSuccess ||
      (e = cudaEventRecord(stop, s)) != cudaSuccess || (e = cudaEventSynchronize(stop)) != cudaSuccess ||
      (e = cudaEventElapsedTime(&ms, start, stop)) != cudaSuccess)
    return static_cast<int>(e);
  *seconds = ms * 1e-3;
  return 0;
}

void rt_segmented_free(void *handle) {
  auto *p = static_cast<plan *>(handle);
  if (p != nullptr)
    (void)cudaFree(p->temp);
  delete p;
}
}
