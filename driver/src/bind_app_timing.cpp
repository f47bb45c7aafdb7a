// Timing "as an application calls it" (the runtime benchmark, issue 13; `reducetune
// calibrate`): one call on a stream between two events, launches included, the stream
// synchronised after each call so that every sample starts on an idle GPU, as an
// application's lone reduction does. C++ callers (the Reducer, CUB) are timed here, without
// Python between the events; PyTorch and CuPy are timed by the benchmark with their own
// events. Also the store side of calibrate: a size's or an axis shape's candidates and their
// recorded times.
#include "common.hpp"

#include "reducetune/baseline/cub_reduce.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/event.hpp"
#include "reducetune/db/application_ranking.hpp"
#include "reducetune/db/axis_candidates.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/statistics.hpp"
#include "reducetune/runtime/reducer.hpp"
#include "reducetune/space/problem.hpp"
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

void check_reducers(const std::vector<rt::reducer *> &rs, rt::dtype type, int samples) {
  if (rs.empty() || samples < 1)
    throw rt::invalid_configuration("time_in_rounds needs reducers and samples >= 1");
  for (const rt::reducer *r : rs)
    if (r->type() != type || r->op() != rs[0]->op())
      throw rt::invalid_configuration("time_in_rounds: every reducer reduces one type and "
                                      "operator, the data's");
}

// `elements` of the tuner's workload data, on the device: the uniform pattern of
// verify/patterns.hpp with the default seed, since data decides what an atomic finish costs
// (e.g. a min/max compare-and-swap stops early when nothing changes).
rt::device_buffer workload_data(rt::dtype type, rt::reduce_op op, std::uint64_t elements) {
  rt::device_buffer in(elements * rt::size_of(type));
  const auto host = rt::generate_bytes(type, rt::data_pattern::uniform, op, elements);
  in.upload(host.data(), host.size());
  return in;
}

// The median lone-call time of each call (hot data after the warm-up), taken in rounds:
// every round times each call once, in an order that rotates from round to round, so that
// the host's drift reaches them alike. `compile` (one per call) runs first, side by side
// (NVRTC takes a fraction of a second a point), then each call is warmed one by one.
std::vector<double> medians_in_rounds(const std::vector<call_on> &calls,
                                      const std::vector<std::function<void()>> &compile,
                                      int samples) {
  {
    std::vector<std::future<void>> compiled;
    for (const auto &c : compile)
      compiled.push_back(std::async(std::launch::async, c));
    for (auto &f : compiled)
      f.get();
  }
  for (const auto &c : calls)
    warm_up(c, nullptr);
  rt::event start, stop;
  std::vector<std::vector<double>> t(calls.size());
  for (int i = 0; i < samples; ++i)
    for (std::size_t j = 0; j < calls.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(i)) % calls.size();
      t[k].push_back(one_call(calls[k], nullptr, start, stop));
    }
  std::vector<double> medians;
  for (const auto &v : t)
    medians.push_back(rt::summarize(v).median);
  return medians;
}

// Each reducer's whole-array call on n elements.
std::vector<double> whole_array_medians(const std::vector<rt::reducer *> &rs, rt::dtype type,
                                        std::uint64_t n, int samples) {
  check_reducers(rs, type, samples);
  if (n == 0)
    throw rt::invalid_configuration("time_in_rounds needs n >= 1");
  const auto in = workload_data(type, rs[0]->op(), n);
  rt::device_buffer out(16);
  std::vector<call_on> calls;
  std::vector<std::function<void()>> compile;
  for (rt::reducer *r : rs) {
    calls.push_back([r, &in, &out, n](cudaStream_t s) { r->reduce(in.data(), n, out.data(), s); });
    compile.push_back([r, n] { (void)r->choice(n); });
  }
  return medians_in_rounds(calls, compile, samples);
}

// Each reducer's axis call (reducer::reduce_axis) on the shape, as an application calls it.
std::vector<double> axis_medians(const std::vector<rt::reducer *> &rs, rt::dtype type,
                                 const rt::reduction_shape &shape, int samples) {
  check_reducers(rs, type, samples);
  const rt::problem p{type, rs[0]->op(), shape};
  rt::validate(p);
  const auto in = workload_data(type, p.op, p.elements());
  rt::device_buffer out(p.outputs() * rt::size_of(type));
  std::vector<call_on> calls;
  std::vector<std::function<void()>> compile;
  for (rt::reducer *r : rs) {
    calls.push_back(
        [r, &in, &out, shape](cudaStream_t s) { r->reduce_axis(in.data(), shape, out.data(), s); });
    compile.push_back([r, shape] { (void)r->choice_axis(shape); });
  }
  return medians_in_rounds(calls, compile, samples);
}

nb::dict candidate_dict(const db::application_candidate &c) {
  nb::dict d;
  d["measurement_id"] = c.measurement_id;
  d["family"] = c.pick.family;
  d["variant"] = c.pick.variant;
  d["launch"] = c.pick.launch;
  d["determinism"] = c.pick.determinism;
  d["median_s"] = c.pick.median_s;
  d["launches"] = c.pick.launches;
  d["application_s"] = c.pick.application_s > 0 ? nb::cast(c.pick.application_s) : nb::none();
  return d;
}

nb::list candidates_dict(const std::vector<db::application_candidate> &list) {
  nb::list out;
  for (const auto &c : list)
    out.append(candidate_dict(c));
  return out;
}

nb::object id_or_none(std::int64_t id) { return id != 0 ? nb::cast(id) : nb::none(); }

// (outer, r, inner) -> {"candidates", "run_to_run_pick", "batch_invariant_pick"} of the axis
// table of the device with this UUID's model (db/axis_candidates.hpp); empty when none.
nb::dict axis_candidates_dict(const std::string &path, const std::string &type,
                              const std::string &op, const std::string &uuid,
                              const rt::point_selection &selection) {
  const auto catalog = db::catalog::open(path, selection);
  nb::dict out;
  const auto [device, table] = catalog.axis_table_for({uuid, "", 0}, type, op);
  if (table == nullptr)
    return out;
  for (const auto &shape : db::axis_candidates_of(*table, device->device, library())) {
    nb::list cands;
    for (const auto &c : shape.candidates) {
      nb::dict d = candidate_dict(c.candidate);
      d["batch_invariant"] = c.batch_invariant;
      cands.append(d);
    }
    nb::dict row;
    row["candidates"] = cands;
    row["run_to_run_pick"] = id_or_none(shape.run_to_run_pick);
    row["batch_invariant_pick"] = id_or_none(shape.batch_invariant_pick);
    out[nb::make_tuple(shape.shape.outer, shape.shape.r, shape.shape.inner)] = row;
  }
  return out;
}

void bind_axis_calibration(nb::module_ &m) {
  m.def("time_axis_in_rounds", [](const std::vector<rt::reducer *> &rs, const std::string &type,
                                  std::uint64_t outer, std::uint64_t r, std::uint64_t inner,
                                  int samples, int device) {
    nb::gil_scoped_release unlocked;
    make_current(device);
    return axis_medians(rs, rt::dtype_from_string(type), {outer, r, inner}, samples);
  }, nb::arg("reducers"), nb::arg("dtype"), nb::arg("outer"), nb::arg("r"), nb::arg("inner"),
        nb::arg("samples"), nb::arg("device") = 0,
        "The median lone axis call (reduce_axis) of each reducer on the shape, in rounds.");
  m.def("axis_application_candidates", [](const std::string &path, const std::string &type,
                                          const std::string &op, const std::string &uuid,
                                          bool nondeterministic, bool allow_flagged) {
    return axis_candidates_dict(path, type, op, uuid, {allow_flagged, !nondeterministic});
  }, nb::arg("db"), nb::arg("dtype"), nb::arg("op"), nb::arg("uuid"),
        nb::arg("nondeterministic") = false, nb::arg("allow_flagged") = false,
        "(outer, r, inner) -> that tuned shape's calibration candidates and picks.");
}

void bind_calibration(nb::module_ &m) {
  m.def("time_in_rounds", [](const std::vector<rt::reducer *> &rs, const std::string &type,
                             std::uint64_t n, int samples, int device) {
    nb::gil_scoped_release unlocked;
    make_current(device);
    return whole_array_medians(rs, rt::dtype_from_string(type), n, samples);
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
  bind_axis_calibration(m);
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
