// The GPU side: device detection, evaluating a variant, the CUB baseline, the streaming
// ceiling and one streaming read launched as an application launches it. In-process: the
// Python driver runs these in a worker process (reducetune.evaluate.gpu) so that a variant
// that destroys the CUDA context does not end the study.
#include "common.hpp"
#include "lone_call.hpp"
#include "py_point.hpp"

#include "reducetune/baseline/cub_baseline.hpp"
#include "reducetune/baseline/streaming_ceiling.hpp"
#include "reducetune/baseline/streaming_reader.hpp"
#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/space.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rtpy {
namespace {

const rt::device_info &device(int ordinal) {
  static std::mutex mutex;
  static std::map<int, rt::device_info> devices;
  std::lock_guard lock(mutex);
  auto it = devices.find(ordinal);
  if (it == devices.end()) it = devices.emplace(ordinal, rt::query_device(ordinal)).first;
  return it->second;
}

// One reader per device (its sink and its shapes' grids, made on the first read), kept for the
// process's life so that a read allocates nothing. Held under `reader_mutex` for the launch.
std::mutex reader_mutex;
rt::streaming_reader &reader(int ordinal) {
  static std::map<int, std::unique_ptr<rt::streaming_reader>> readers;
  auto &r = readers[ordinal];
  if (!r) r = std::make_unique<rt::streaming_reader>(device(ordinal));
  return *r;
}

// One streaming read, refused before any device for a bad shape name, size or pointer: `run`
// gets the read as a call on a stream and makes it (launches it, or times it), under
// reader_mutex. The GIL stays held, as in the runtime's reduce_axis binding, the call it is
// timed beside.
template <class Run>
auto with_read(std::uintptr_t data, std::uint64_t bytes, const std::string &shape, int ordinal,
               Run run) {
  const std::size_t which = rt::read_shape_index(shape);
  const auto *ptr = reinterpret_cast<const void *>(data);
  rt::require_streaming_read(ptr, bytes);
  std::lock_guard lock(reader_mutex);
  make_current(ordinal);
  rt::streaming_reader &r = reader(ordinal);
  return run([&](cudaStream_t s) { r.read(which, ptr, bytes, s); });
}

void streaming_read(std::uintptr_t data, std::uint64_t bytes, std::uintptr_t stream,
                    const std::string &shape, int ordinal) {
  with_read(data, bytes, shape, ordinal,
            [&](const call_on &read) { read(reinterpret_cast<cudaStream_t>(stream)); });
}

// The same read as one lone call timed in C++ (lone_call.hpp), the streaming ceiling of the axis
// benchmark beside the C++ axis call.
std::pair<double, double> app_time_streaming_read(std::uintptr_t data, std::uint64_t bytes,
                                                  std::uintptr_t stream, const std::string &shape,
                                                  int ordinal) {
  return with_read(data, bytes, shape, ordinal, [&](const call_on &read) {
    return time_lone_call(read, reinterpret_cast<cudaStream_t>(stream)).pair();
  });
}

// The mixed stream (streaming_read.hpp): a launch, or one lone call timed in C++, as
// streaming_read's; refused before any device for a size or pointer it cannot take.
template <class Run>
auto with_mixed(std::uintptr_t data, std::uint64_t bytes, std::uintptr_t out,
                std::uint64_t out_bytes, int ordinal, Run run) {
  const auto *in = reinterpret_cast<const void *>(data);
  auto *o = reinterpret_cast<void *>(out);
  rt::require_streaming_mixed(in, bytes, o, out_bytes);
  make_current(ordinal);
  return run([&](cudaStream_t s) { rt::enqueue_streaming_mixed(in, bytes, o, out_bytes, s); });
}

void streaming_mixed(std::uintptr_t data, std::uint64_t bytes, std::uintptr_t out,
                     std::uint64_t out_bytes, std::uintptr_t stream, int ordinal) {
  with_mixed(data, bytes, out, out_bytes, ordinal,
             [&](const call_on &mix) { mix(reinterpret_cast<cudaStream_t>(stream)); });
}

std::pair<double, double> app_time_streaming_mixed(std::uintptr_t data, std::uint64_t bytes,
                                                   std::uintptr_t out, std::uint64_t out_bytes,
                                                   std::uintptr_t stream, int ordinal) {
  return with_mixed(data, bytes, out, out_bytes, ordinal, [&](const call_on &mix) {
    return time_lone_call(mix, reinterpret_cast<cudaStream_t>(stream)).pair();
  });
}

// The evaluating process keeps the last workload's input and reference between calls (a
// study evaluates hundreds of points on one workload). Calls run one at a time.
std::mutex cache_mutex;
rt::evaluation_cache &evaluation_cache() {
  static rt::evaluation_cache cache;
  return cache;
}

rt::evaluate_options options_of(const nb::dict &d) {
  rt::evaluate_options o;
  o.hot = get_or<bool>(d, "hot", o.hot);
  o.graph = get_or<bool>(d, "graph", o.graph); // replay sequences as CUDA graphs (default)
  for (auto *rule : {&o.cold_rule, &o.hot_rule}) {
    rule->min_samples = get_or<std::size_t>(d, "min_samples", rule->min_samples);
    rule->max_samples = get_or<std::size_t>(d, "max_samples", rule->max_samples);
    rule->max_noise = get_or<double>(d, "max_noise", rule->max_noise);
    rule->time_cap_s = get_or<double>(d, "time_cap_s", rule->time_cap_s);
  }
  // racing (issue 25): cold samples only; an outpaced point takes no hot samples at all
  o.cold_rule.outpaced_above_s = get_or<double>(d, "outpaced_above_s", 0.0);
  o.ceiling_bytes_per_s = get_or<double>(d, "ceiling_bytes_per_s", 0.0);
  return o;
}

const char *status_of(rt::failure_kind k) {
  switch (k) {
  case rt::failure_kind::invalid_configuration:
    return "invalid";
  case rt::failure_kind::wrong_result:
    return "wrong";
  default:
    return "failed";
  }
}

nb::dict failure_dict(const char *status, const std::string &kind, const std::string &reason) {
  nb::dict d;
  d["status"] = status;
  d["kind"] = kind;
  d["reason"] = reason;
  return d;
}

// Where the evaluation's time went (measure/measurement.hpp, evaluation_times): the tuner sums
// them into its breakdown's sub-phases of "measuring" (tuning/timing.py).
nb::dict times_dict(const rt::evaluation_times &t) {
  nb::dict d;
  d["compile_s"] = t.compile_s;
  d["prepare_s"] = t.prepare_s;
  d["sampling_s"] = t.sampling_s;
  d["verify_s"] = t.verify_s;
  d["workload_s"] = t.workload_s; // prepare_s's parts
  d["setup_s"] = t.setup_s;
  d["graphs_s"] = t.graphs_s;
  d["teardown_s"] = t.teardown_s;
  return d;
}

nb::dict evaluation_dict(const rt::evaluation &e) {
  if (const auto *f = std::get_if<rt::failure>(&e)) {
    nb::dict d = failure_dict(status_of(f->kind), rt::to_string(f->kind), f->reason);
    d["times"] = times_dict(f->times);
    return d;
  }
  const auto &m = std::get<rt::measurement>(e);
  nb::dict d;
  d["status"] = "ok";
  d["kind"] = "";
  d["reason"] = m.check.reason;
  d["samples_s"] = m.cold.samples_s;
  d["hot_samples_s"] = m.hot.samples_s;
  d["median_s"] = m.cold.stats.median;
  d["rel_stddev"] = m.cold.stats.rel_stddev;
  d["stopped"] = rt::to_string(m.cold.stopped);
  d["bytes_read"] = m.bytes_read;
  d["launches"] = m.launches;
  d["bytes_per_s"] = m.bytes_per_s;
  d["gbps"] = m.bytes_per_s / 1e9;
  d["pct_of_peak"] = m.percent_of_peak;
  d["pct_of_ceiling"] = m.percent_of_ceiling;
  d["expected"] = m.check.expected;
  d["got"] = m.check.got;
  d["times"] = times_dict(m.times);
  return d;
}

// The problem as a Problem, or its plain form {"dtype", "op", "shape": [outer, r, inner]}
// (what crosses the worker's JSON pipe, as a point crosses it as Point.to_dict()).
rt::problem problem_arg(nb::handle h) {
  if (nb::isinstance<rt::problem>(h)) return nb::cast<rt::problem>(h);
  const auto d = nb::cast<nb::dict>(h);
  for (const char *key : {"dtype", "op", "shape"})
    if (!d.contains(key))
      throw rt::invalid_configuration(std::string{"a problem's dict needs \""} + key + "\"");
  const auto shape = nb::cast<std::vector<std::uint64_t>>(d["shape"]);
  if (shape.size() != 3) throw rt::invalid_configuration("a problem's shape is [outer, r, inner]");
  return {rt::dtype_from_string(nb::cast<std::string>(d["dtype"])),
          rt::op_from_string(nb::cast<std::string>(d["op"])),
          {shape[0], shape[1], shape[2]}};
}

// The point as a Point, or its plain form (Point.to_dict()): its family and its typed value.
plain_point point_arg(nb::handle h) {
  if (nb::isinstance<py_point>(h)) {
    const auto &pt = nb::cast<const py_point &>(h);
    return {&pt.family(), pt.p};
  }
  return point_of_dict(nb::cast<nb::dict>(h));
}

rt::input_data input_data_of(const nb::dict &d) {
  rt::input_data in;
  in.pattern = rt::data_pattern_from_string(get_or<std::string>(d, "pattern", "uniform"));
  in.seed = get_or<std::uint64_t>(d, "seed", in.seed);
  in.offset_elements = get_or<unsigned>(d, "offset_elements", 0);
  return in;
}

} // namespace

nb::dict evaluate_point(const rt::family &f, const rt::point &p, const rt::problem &pr,
                        const nb::dict &data, int ordinal, const nb::dict &options) {
  rt::require_point_for(f, p, pr); // before any device: the same refusal with or without a GPU
  const rt::input_data in = input_data_of(data);
  const rt::evaluate_options opts = options_of(options);
  const rt::device_info &dev = device(ordinal);
  // The device's own limits decide validity and the grid, whatever space the point came from.
  const rt::search_space space(f, p.compile.type, p.compile.op, rt::limits_of(dev));
  rt::evaluation result;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(cache_mutex);
    make_current(ordinal); // else device 0 measures whatever the ordinal says (issue 25)
    result = rt::evaluate(space, pr, p, in, shared_compiler(), dev, opts, evaluation_cache());
  }
  return evaluation_dict(result);
}

// The ceiling as a dict: the fastest shape's rate, samples and name, and every shape's rate.
nb::dict streaming_ceiling(int ordinal, std::uint64_t bytes) {
  const rt::device_info &dev = device(ordinal);
  rt::ceiling_result r;
  {
    nb::gil_scoped_release release;
    make_current(ordinal);
    r = rt::measure_streaming_ceiling(dev, bytes);
  }
  nb::dict d;
  d["bytes_per_s"] = r.bytes_per_s;
  d["samples_s"] = r.cold.samples_s;
  d["bytes"] = r.bytes;
  d["shape"] = r.shape;
  nb::list shapes; // in read_shapes() order
  for (const auto &s : r.shapes) {
    nb::dict e;
    e["shape"] = s.shape;
    e["bytes_per_s"] = s.bytes_per_s;
    shapes.append(e);
  }
  d["shapes"] = shapes;
  return d;
}

void bind_device(nb::module_ &m) {
  m.def(
      "query_device", [](int ordinal) { return device_to_dict(device(ordinal)); },
      nb::arg("ordinal") = 0, "The device's identity and limits; DeviceError without a GPU.");
  m.def(
      "device_limits", [](int ordinal) { return rt::limits_of(device(ordinal)); },
      nb::arg("ordinal") = 0);
  // The point and the problem arrive typed: a Point and a Problem, or their plain dicts
  // (Point.to_dict(), what a worker receives over JSON); never a label (labels are read back
  // only by the store).
  m.def(
      "evaluate",
      [](nb::handle point, nb::handle problem, const nb::dict &data, int ordinal,
         const nb::dict &options) {
        const plain_point pt = point_arg(point);
        return evaluate_point(*pt.family, pt.p, problem_arg(problem), data, ordinal, options);
      },
      nb::arg("point"), nb::arg("problem"), nb::arg("data") = nb::dict(), nb::arg("ordinal") = 0,
      nb::arg("options") = nb::dict(),
      nb::sig("def evaluate(point: Point | dict, problem: Problem | dict, data: dict = {}, "
              "ordinal: int = 0, options: dict = {}) -> dict"),
      "Compiles (cached), runs, verifies and times one point on one problem (data: its "
      "pattern, seed and offset_elements): a measurement dict (status 'ok') or a failure dict "
      "(status 'failed' | 'invalid' | 'wrong', kind, reason).");
  m.def(
      "evaluate_cub",
      [](const nb::dict &workload, int ordinal, const nb::dict &options) {
        const rt::workload w = to_workload(workload);
        const auto opts = options_of(options);
        const rt::device_info &dev = device(ordinal);
        rt::evaluation e;
        {
          nb::gil_scoped_release release;
          std::lock_guard lock(cache_mutex);
          make_current(ordinal);
          e = rt::evaluate_cub(w, dev, opts, evaluation_cache());
        }
        return evaluation_dict(e);
      },
      nb::arg("workload"), nb::arg("ordinal") = 0, nb::arg("options") = nb::dict());
  m.def("streaming_ceiling", &streaming_ceiling, nb::arg("ordinal") = 0,
        nb::arg("bytes") = 0, // 0: default_ceiling_bytes (4 GiB)
        "Measures the streaming ceiling of device `ordinal` over `bytes` (0: 4 GiB, or an "
        "eighth of the device's memory if less), in the tuner's protocol (cold L2, gated): every "
        "read shape timed. A dict: bytes_per_s and samples_s of the fastest shape, its name "
        "(shape), bytes, and shapes (each shape's name and bytes_per_s, in read_shapes() "
        "order).");
  m.def("streaming_read", &streaming_read, nb::arg("data_ptr"), nb::arg("bytes"), nb::arg("stream"),
        nb::arg("shape"), nb::arg("ordinal") = 0,
        "Launches the read-only streaming kernel once over `bytes` (a multiple of 16) at "
        "`data_ptr` (16-byte aligned) on `stream`, in the read shape named `shape` "
        "(streaming_ceiling's 'shape'), as an application launches a kernel: no gate, no L2 "
        "flush, no synchronisation, nothing allocated after the device's first read. "
        "InvalidConfiguration for an unknown shape, a size or a pointer it cannot read.");
  m.def("app_time_streaming_read", &app_time_streaming_read, nb::arg("data_ptr"), nb::arg("bytes"),
        nb::arg("stream"), nb::arg("shape"), nb::arg("ordinal") = 0,
        "streaming_read as one lone call timed in C++ (two events around it, the stream "
        "synchronised after): (seconds between the events, the call's host seconds).");
  m.def("streaming_mixed", &streaming_mixed, nb::arg("data_ptr"), nb::arg("bytes"),
        nb::arg("out_ptr"), nb::arg("out_bytes"), nb::arg("stream"), nb::arg("ordinal") = 0,
        "Launches the mixed stream once: the streaming read of `bytes` (a multiple of 16) at "
        "`data_ptr` (16-byte aligned) that also writes `out_bytes` (rounded down to 4, at most "
        "`bytes`) at `out_ptr` (4-byte aligned), a share per tile along the input, as a "
        "reduction writes its outputs; a plain stream with a reduction's reads and writes (the "
        "axis benchmark's reference beside its ceilings). InvalidConfiguration for sizes or "
        "pointers it cannot take.");
  m.def("app_time_streaming_mixed", &app_time_streaming_mixed, nb::arg("data_ptr"),
        nb::arg("bytes"), nb::arg("out_ptr"), nb::arg("out_bytes"), nb::arg("stream"),
        nb::arg("ordinal") = 0,
        "streaming_mixed as one lone call timed in C++ (two events around it, the stream "
        "synchronised after): (seconds between the events, the call's host seconds).");
}

} // namespace rtpy
