// Timing "as an application calls it" (the runtime benchmark, issue 13): one call on a
// stream between two events, launches included, the stream synchronised after each call so
// that every sample starts on an idle GPU, as an application's lone reduction does. C++
// callers (the Reducer, CUB) are timed here, without Python between the events; PyTorch and
// CuPy are timed by the benchmark with their own events.
#include "common.hpp"

#include "reducetune/baseline/cub_reduce.hpp"
#include "reducetune/cuda/event.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/runtime/reducer.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace rtpy {
namespace {

std::vector<double> time_calls(const std::function<void(cudaStream_t)> &call, int samples,
                               cudaStream_t s) {
  rt::event start, stop;
  for (int i = 0; i < 3; ++i) // first calls compile, load and allocate scratch
    call(s);
  RT_CUDA_CALL(cudaStreamSynchronize(s));
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    start.record(s);
    call(s);
    stop.record(s);
    stop.synchronize();
    out.push_back(rt::elapsed_seconds(start, stop));
  }
  return out;
}

} // namespace

void bind_app_timing(nb::module_ &m) {
  m.def("app_time_reducer",
        [](rt::reducer &r, std::uintptr_t in, std::uint64_t n, std::uintptr_t out, int samples,
           std::uintptr_t stream) {
          nb::gil_scoped_release unlocked;
          return time_calls(
              [&](cudaStream_t s) {
                r.reduce(reinterpret_cast<const void *>(in), n, reinterpret_cast<void *>(out), s);
              },
              samples, reinterpret_cast<cudaStream_t>(stream));
        },
        nb::arg("reducer"), nb::arg("data_ptr"), nb::arg("n"), nb::arg("out_ptr"),
        nb::arg("samples"), nb::arg("stream") = 0);
  // CUB's DeviceReduce with its temporary storage allocated beforehand (as an application
  // that reduces repeatedly keeps it): its two launches are what is timed.
  m.def("app_time_cub",
        [](const std::string &type, const std::string &op, std::uintptr_t in, std::uint64_t n,
           std::uintptr_t out, int samples, std::uintptr_t stream) {
          rt::cub_reduce cub(rt::dtype_from_string(type), rt::op_from_string(op), n);
          nb::gil_scoped_release unlocked;
          return time_calls(
              [&](cudaStream_t s) {
                cub.enqueue(reinterpret_cast<const void *>(in), reinterpret_cast<void *>(out), n, s);
              },
              samples, reinterpret_cast<cudaStream_t>(stream));
        },
        nb::arg("dtype"), nb::arg("op"), nb::arg("data_ptr"), nb::arg("n"), nb::arg("out_ptr"),
        nb::arg("samples"), nb::arg("stream") = 0);
}

} // namespace rtpy
