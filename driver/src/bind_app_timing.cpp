// Timing "as an application calls it" (the runtime benchmark, issue 13; `reducetune
// calibrate`): one call on a stream between two events, launches included, the stream
// synchronised after each call so that every sample starts on an idle GPU, as an
// application's lone reduction does. C++ callers (the Reducer, CUB) are timed here, without
// Python between the events; PyTorch and CuPy are timed by the benchmark with their own
// events. Also the store side of calibrate: a size's or an axis shape's candidates and their
// recorded times.
#include "common.hpp"
#include "lone_call.hpp"

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
#include <string>
#include <vector>

namespace rtpy {
namespace {

namespace db = reducetune::db;

void warm_up(const call_on &call, cudaStream_t s) {
  for (int i = 0; i < 3; ++i) // first calls compile, load and allocate scratch
    call(s);
  RT_CUDA_CALL(cudaStreamSynchronize(s));
}

std::vector<double> time_calls(const call_on &call, int samples, cudaStream_t s) {
  rt::event start, stop;
  warm_up(call, s);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(samples));
  for (int i = 0; i < samples; ++i)
    out.push_back(time_lone_call(call, s, start, stop).seconds);
  return out;
}

// One entry per round: the order in which that round times the calls, by index.
using round_orders = std::vector<std::vector<std::int64_t>>;

void check_reducers(const std::vector<rt::reducer *> &rs, rt::dtype type) {
  if (rs.empty())
    throw rt::invalid_configuration("time_in_rounds needs reducers");
  for (const rt::reducer *r : rs)
    if (r->type() != type || r->op() != rs[0]->op())
      throw rt::invalid_configuration("time_in_rounds: every reducer reduces one type and "
                                      "operator, the data's");
}

std::string order_text(const std::vector<std::int64_t> &order) {
  std::string out = "[";
  for (std::size_t i = 0; i < order.size(); ++i)
    out += (i ? ", " : "") + std::to_string(order[i]);
  return out + "]";
}

bool is_permutation_of(const std::vector<std::int64_t> &order, std::size_t calls) {
  std::vector<bool> seen(calls, false);
  for (const std::int64_t k : order) {
    const auto call = static_cast<std::size_t>(k);
    if (k < 0 || call >= calls || seen[call])
      return false;
    seen[call] = true;
  }
  return order.size() == calls;
}

// The rounds' orders come from Python's one rule (runtime/rounds.py), so that calibrate and
// the benchmarks share it; here they are only followed, and refused unless each round times
// every call exactly once (checked before any CUDA call: no GPU needed to be told).
void check_orders(const round_orders &orders, std::size_t calls) {
  if (orders.empty())
    throw rt::invalid_configuration("time_in_rounds needs one order per round, at least one");
  for (std::size_t i = 0; i < orders.size(); ++i)
    if (!is_permutation_of(orders[i], calls))
      throw rt::invalid_configuration(
          "time_in_rounds: round " + std::to_string(i) + "'s order " + order_text(orders[i]) +
          " is not a permutation of 0.." + std::to_string(calls - 1) + " (one per reducer)");
}

void check_rounds(const std::vector<rt::reducer *> &rs, rt::dtype type,
                  const round_orders &orders) {
  check_reducers(rs, type);
  check_orders(orders, rs.size());
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
// every round times each call once, in that round's order (`orders`, checked by
// check_orders: the seeded shuffles of runtime/rounds.py, since a call finds L2 as the call
// before it left it), so that the host's drift reaches them alike. `compile` (one per call)
// runs first, side by side (NVRTC takes a fraction of a second a point), then each call is
// warmed one by one.
std::vector<double> medians_in_rounds(const std::vector<call_on> &calls,
                                      const std::vector<std::function<void()>> &compile,
                                      const round_orders &orders) {
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
  for (const auto &order : orders)
    for (const std::int64_t k : order) {
      const auto call = static_cast<std::size_t>(k);
      t[call].push_back(time_lone_call(calls[call], nullptr, start, stop).seconds);
    }
  std::vector<double> medians;
  for (const auto &v : t)
    medians.push_back(rt::summarize(v).median);
  return medians;
}

// Each reducer's whole-array call on n elements.
std::vector<double> whole_array_medians(const std::vector<rt::reducer *> &rs, rt::dtype type,
                                        std::uint64_t n, const round_orders &orders) {
  const auto in = workload_data(type, rs[0]->op(), n);
  rt::device_buffer out(16);
  std::vector<call_on> calls;
  std::vector<std::function<void()>> compile;
  for (rt::reducer *r : rs) {
    calls.push_back([r, &in, &out, n](cudaStream_t s) { r->reduce(in.data(), n, out.data(), s); });
    compile.push_back([r, n] { (void)r->choice(n); });
  }
  return medians_in_rounds(calls, compile, orders);
}

// Each reducer's axis call (reducer::reduce_axis) on the shape, as an application calls it.
std::vector<double> axis_medians(const std::vector<rt::reducer *> &rs, rt::dtype type,
                                 const rt::reduction_shape &shape, const round_orders &orders) {
  const rt::problem p{type, rs[0]->op(), shape};
  const auto in = workload_data(type, p.op, p.elements());
  rt::device_buffer out(p.outputs() * rt::size_of(type));
  std::vector<call_on> calls;
  std::vector<std::function<void()>> compile;
  for (rt::reducer *r : rs) {
    calls.push_back(
        [r, &in, &out, shape](cudaStream_t s) { r->reduce_axis(in.data(), shape, out.data(), s); });
    compile.push_back([r, shape] { (void)r->choice_axis(shape); });
  }
  return medians_in_rounds(calls, compile, orders);
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
                                  const round_orders &orders, int device) {
    nb::gil_scoped_release unlocked;
    const auto dtype = rt::dtype_from_string(type);
    check_rounds(rs, dtype, orders);
    rt::validate(rt::problem{dtype, rs[0]->op(), {outer, r, inner}});
    make_current(device);
    return axis_medians(rs, dtype, {outer, r, inner}, orders);
  }, nb::arg("reducers"), nb::arg("dtype"), nb::arg("outer"), nb::arg("r"), nb::arg("inner"),
        nb::arg("orders"), nb::arg("device") = 0,
        "The median lone axis call (reduce_axis) of each reducer on the shape, in rounds: one "
        "per entry of `orders`, each a permutation of the reducers' indices.");
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
                             std::uint64_t n, const round_orders &orders, int device) {
    nb::gil_scoped_release unlocked;
    const auto dtype = rt::dtype_from_string(type);
    check_rounds(rs, dtype, orders);
    if (n == 0)
      throw rt::invalid_configuration("time_in_rounds needs n >= 1");
    make_current(device);
    return whole_array_medians(rs, dtype, n, orders);
  }, nb::arg("reducers"), nb::arg("dtype"), nb::arg("n"), nb::arg("orders"),
        nb::arg("device") = 0,
        "The median lone whole-array call of each reducer on n elements, in rounds: one per "
        "entry of `orders`, each a permutation of the reducers' indices.");
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
  // The store's rule for a calibrated size's pick (application_ranking.hpp), for calibrate's
  // report: its own min() of the lone calls named another candidate than the Reducer launched
  // where two were within application_tie (H200, 2026-11-26: cap_4 against cap_1, one grid).
  m.def("measured_pick", [](const std::vector<std::pair<double, double>> &costs) {
    std::vector<db::call_cost> cs;
    for (const auto &[application_s, median_s] : costs)
      cs.push_back({application_s, median_s});
    const auto i = db::measured_pick(cs);
    return i ? nb::cast(*i) : nb::none();
  }, nb::arg("costs"),
        "[(application_s, median_s)] -> the index of the pick among them (within "
        "application_tie of the fastest lone call, the least replayed median), None when no "
        "application_s is above 0.");
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
  // The axis benchmark's C++ contenders (benchmarks/axis.py), one lone call per sample so that
  // the benchmark's rounds interleave them with the Python peers: (seconds between the
  // events, the call's own host seconds). The reducer's axis call as a C++ application makes it.
  m.def("app_time_axis_call",
        [](rt::reducer &r, std::uintptr_t in, std::uint64_t outer, std::uint64_t len,
           std::uint64_t inner, std::uintptr_t out, std::uintptr_t stream, int device) {
          make_current(device);
          nb::gil_scoped_release unlocked;
          return time_lone_call(
                     [&](cudaStream_t s) {
                       r.reduce_axis(reinterpret_cast<const void *>(in), {outer, len, inner},
                                     reinterpret_cast<void *>(out), s);
                     },
                     reinterpret_cast<cudaStream_t>(stream))
              .pair();
        },
        nb::arg("reducer"), nb::arg("data_ptr"), nb::arg("outer"), nb::arg("r"),
        nb::arg("inner"), nb::arg("out_ptr"), nb::arg("stream") = 0, nb::arg("device") = -1);
  // The memcpy ceiling: cudaMemcpyAsync device to device of `bytes`, one lone call.
  m.def("app_time_memcpy",
        [](std::uintptr_t dst, std::uintptr_t src, std::uint64_t bytes, std::uintptr_t stream,
           int device) {
          make_current(device);
          nb::gil_scoped_release unlocked;
          return time_lone_call(
                     [&](cudaStream_t s) {
                       RT_CUDA_CALL(cudaMemcpyAsync(reinterpret_cast<void *>(dst),
                                                    reinterpret_cast<const void *>(src), bytes,
                                                    cudaMemcpyDeviceToDevice, s));
                     },
                     reinterpret_cast<cudaStream_t>(stream))
              .pair();
        },
        nb::arg("dst_ptr"), nb::arg("src_ptr"), nb::arg("bytes"), nb::arg("stream") = 0,
        nb::arg("device") = -1);
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
