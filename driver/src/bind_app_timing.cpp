// Timing "as an application calls it" (the runtime benchmark, issue 13; `reducetune
// calibrate`): one call on a stream between two events, launches included, the stream
// synchronised after each call so that every sample starts on an idle GPU, as an
// application's lone reduction does. C++ callers (the Reducer, CUB) are timed here, without
// Python between the events; PyTorch and CuPy are timed by the benchmark with their own
// events. Also the store side of calibrate: a size's candidates and their recorded times.
#include "common.hpp"

#include "reducetune/baseline/cub_reduce.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/event.hpp"
#include "reducetune/db/application_ranking.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/statistics.hpp"
#include "reducetune/runtime/reducer.hpp"
#include "reducetune/verify/patterns.hpp"

#include <cstdint>
#include <functional>
#include <future>
#include <vector>

namespace rtpy {
namespace {

namespace db = reducetune::db;

using call_on = std::function<void(cudaStream_t)>;

void warm_up(const call_on &call, cudaStream_t s) {
  for (int i = 0; i < 3; ++i) // first calls compile, load and allocate scratch
    call(s);
  RT_CUDA_CALL(cudaStreamSynchronize(s));
}

// One lone call between two events, the stream idle before it (synchronised after).
double one_call(const call_on &call, cudaStream_t s, rt::event &start, rt::event &stop) {
  start.record(s);
  call(s);
  stop.record(s);
  stop.synchronize();
  return rt::elapsed_seconds(start, stop);
}

std::vector<double> time_calls(const call_on &call, int samples, cudaStream_t s) {
  rt::event start, stop;
  warm_up(call, s);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(samples));
  for (int i = 0; i < samples; ++i)
    out.push_back(one_call(call, s, start, stop));
  return out;
}

// The median lone-call time of each reducer on n elements (the tuner's workload data: the
// uniform pattern of verify/patterns.hpp with the default seed, since data decides what an
// atomic finish costs, e.g. a min/max compare-and-swap stops early when nothing changes; hot
// after the warm-up), taken in rounds: every round times each reducer once, in an order
// that rotates from round to round, so that the host's drift reaches them alike.
std::vector<double> medians_in_rounds(const std::vector<rt::reducer *> &rs, rt::dtype type,
                                      std::uint64_t n, int samples) {
  if (rs.empty() || samples < 1 || n == 0)
    throw rt::invalid_configuration("time_in_rounds needs reducers, samples >= 1 and n >= 1");
  for (const rt::reducer *r : rs)
    if (r->type() != type || r->op() != rs[0]->op())
      throw rt::invalid_configuration("time_in_rounds: every reducer reduces one type and "
                                      "operator, the data's");
  rt::device_buffer in(n * rt::size_of(type)), out(16);
  {
    const auto host = rt::generate_bytes(type, rt::data_pattern::uniform, rs[0]->op(), n);
    in.upload(host.data(), host.size());
  }
  std::vector<call_on> calls;
  for (rt::reducer *r : rs)
    calls.push_back([r, &in, &out, n](cudaStream_t s) { r->reduce(in.data(), n, out.data(), s); });
  { // compiled side by side (NVRTC takes a fraction of a second a point), then warmed one by one
    std::vector<std::future<rt::reducer_choice>> compiled;
    for (rt::reducer *r : rs)
      compiled.push_back(std::async(std::launch::async, [r, n] { return r->choice(n); }));
    for (auto &f : compiled)
      (void)f.get();
  }
  for (const auto &c : calls)
    warm_up(c, nullptr);
  rt::event start, stop;
  std::vector<std::vector<double>> t(rs.size());
  for (int i = 0; i < samples; ++i)
    for (std::size_t j = 0; j < rs.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(i)) % rs.size();
      t[k].push_back(one_call(calls[k], nullptr, start, stop));
    }
  std::vector<double> medians;
  for (const auto &v : t)
    medians.push_back(rt::summarize(v).median);
  return medians;
}

nb::list candidates_dict(const std::vector<db::application_candidate> &list) {
  nb::list out;
  for (const auto &c : list) {
    nb::dict d;
    d["measurement_id"] = c.measurement_id;
    d["family"] = c.pick.family;
    d["variant"] = c.pick.variant;
    d["launch"] = c.pick.launch;
    d["determinism"] = c.pick.determinism;
    d["median_s"] = c.pick.median_s;
    d["launches"] = c.pick.launches;
    d["application_s"] = c.pick.application_s > 0 ? nb::cast(c.pick.application_s) : nb::none();
    out.append(d);
  }
  return out;
}

void bind_calibration(nb::module_ &m) {
  m.def("time_in_rounds", [](const std::vector<rt::reducer *> &rs, const std::string &type,
                             std::uint64_t n, int samples, int device) {
    nb::gil_scoped_release unlocked;
    make_current(device);
    return medians_in_rounds(rs, rt::dtype_from_string(type), n, samples);
  }, nb::arg("reducers"), nb::arg("dtype"), nb::arg("n"), nb::arg("samples"),
        nb::arg("device") = 0);
  // n -> the candidates of the model of the device with this UUID (application_ranking.hpp).
  m.def("application_candidates", [](const std::string &path, const std::string &type,
                                     const std::string &op, const std::string &uuid,
                                     bool nondeterministic, bool allow_flagged) {
    const auto file = db::open_for_reading(path);
    nb::dict out;
    const auto key = db::model_key_of(file, uuid);
    if (!key)
      return out;
    const rt::point_selection selection{allow_flagged, !nondeterministic};
    const auto catalog = db::catalog::load(file, selection);
    for (const auto &[k, list] : db::application_candidates_of(
             catalog, file, rt::dtype_from_string(type), rt::op_from_string(op), selection,
             library()))
      if (k.first == *key)
        out[nb::cast(k.second)] = candidates_dict(list);
    return out;
  }, nb::arg("db"), nb::arg("dtype"), nb::arg("op"), nb::arg("uuid"),
        nb::arg("nondeterministic") = false, nb::arg("allow_flagged") = false);
  // [(measurement_id, median_s, sample_count)] -> rt_application_times, one transaction.
  m.def("record_application_times", [](const std::string &path,
                                       const std::vector<std::tuple<std::int64_t, double,
                                                                    std::int64_t>> &rows) {
    std::vector<db::store::application_time> times;
    for (const auto &[id, median, count] : rows)
      times.push_back({id, median, count});
    db::store::open(path).record_application_times(times);
  }, nb::arg("db"), nb::arg("rows"));
}

} // namespace

void bind_app_timing(nb::module_ &m) {
  bind_calibration(m);
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
