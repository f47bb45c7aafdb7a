// reducetune._core.Reducer (the runtime for Python, reducetune.reduce) and array_info (what a
// DLPack object describes: nanobind reads the protocol, so reducetune does not).
#include "common.hpp"
#include "py_point.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/runtime/reducer.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace rtpy {
namespace {

rt::reducer make_reducer(const std::string &type, const std::string &op,
                         const std::optional<std::string> &database,
                         const std::optional<std::string> &table, bool nondeterministic,
                         bool allow_flagged, const std::optional<std::string> &cache_dir,
                         bool log_fallbacks, std::optional<double> extra_launch_s,
                         std::vector<rt::axis_entry> axis_table,
                         const std::string &axis_determinism) {
  if (database && table)
    throw rt::invalid_configuration("give a results database or an exported table, not both");
  rt::reducer_options o;
  o.selection = {allow_flagged, !nondeterministic};
  o.cache_dir = cache_dir.value_or("");
  o.log_fallbacks = log_fallbacks;
  o.axis_table = std::move(axis_table);
  o.axis_level = rt::axis_determinism_from(axis_determinism);
  if (extra_launch_s) {
    if (!(*extra_launch_s >= 0.0))
      throw rt::invalid_configuration("extra_launch_s must be >= 0 (0: rank by the median)");
    o.extra_launch_s = *extra_launch_s;
  }
  const auto t = rt::dtype_from_string(type);
  const auto p = rt::op_from_string(op);
  if (database)
    return rt::reducer::from_database(*database, t, p, std::move(o));
  if (table)
    return rt::reducer::from_json(*table, t, p, std::move(o));
  return rt::reducer::untuned(t, p, std::move(o));
}

// What a whole-array choice and an axis choice both say of the point they launch: where it
// came from, its labels, determinism and launches (reducer.hpp reducer_choice,
// axis_dispatch.hpp axis_choice).
template <class Choice> nb::dict launch_dict(const Choice &c) {
  nb::dict d;
  d["source"] = c.source;
  d["family"] = c.family;
  d["variant"] = c.variant;
  d["launch"] = c.launch;
  d["determinism"] = c.determinism;
  d["launches"] = c.launches;
  d["grid"] = c.grid;
  d["block"] = c.block;
  return d;
}

nb::dict choice_dict(const rt::reducer_choice &c) {
  nb::dict d = launch_dict(c);
  d["device_name"] = c.device_name;
  d["bucket_n"] = c.bucket_n;
  d["point"] = py_point{c.space, c.chosen}; // typed: a caller measures it without a parse
  d["protocol"] = c.protocol;
  return d;
}

// (outer, r, inner, variant label, launch label) rows, as Python passes a per-shape table.
using axis_row = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::string, std::string>;

std::vector<rt::axis_entry> axis_entries(const std::vector<axis_row> &rows) {
  std::vector<rt::axis_entry> out;
  for (const auto &[outer, r, inner, variant, launch] : rows)
    out.push_back({{outer, r, inner}, variant, launch});
  return out;
}

nb::dict axis_choice_dict(const rt::axis_choice &c) {
  nb::dict d = launch_dict(c);
  d["preset"] = c.preset;
  d["why"] = c.why;
  d["level"] = c.level;
  d["batch_invariant"] = c.batch_invariant;
  d["split"] = c.split;
  d["partials_bytes"] = c.partials_bytes;
  return d;
}

const char *dtype_name(const nb::dlpack::dtype &t) {
  using code = nb::dlpack::dtype_code;
  if (t.lanes != 1)
    return "";
  if (t.code == static_cast<std::uint8_t>(code::Float))
    return t.bits == 32 ? "float32" : t.bits == 64 ? "float64" : t.bits == 16 ? "float16" : "";
  if (t.code == static_cast<std::uint8_t>(code::Int))
    return t.bits == 32 ? "int32" : t.bits == 64 ? "int64" : t.bits == 8 ? "int8" : "int16";
  if (t.code == static_cast<std::uint8_t>(code::UInt))
    return "unsigned";
  if (t.code == static_cast<std::uint8_t>(code::Bfloat))
    return "bfloat16";
  return "";
}

// (data pointer, shape, strides in elements, dtype name, device type, device id) of a DLPack
// object; the dtype is "" when it has no name here. Device type 2 is CUDA (DLPack's kDLCUDA).
nb::tuple array_info(nb::ndarray<nb::ro> a) {
  nb::list shape, strides;
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    shape.append(a.shape(i));
    strides.append(a.stride(i));
  }
  return nb::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), shape, strides,
                        dtype_name(a.dtype()), a.device_type(), a.device_id());
}

// The axis call's methods of Reducer (reducer.hpp reduce_axis) and the rule's functions.
void bind_axis(nb::class_<rt::reducer> &reducer, nb::module_ &m) {
  reducer
      // The axis call (reducer.hpp reduce_axis): (outer, r, inner) -> (outer, inner).
      .def("reduce_axis",
           [](rt::reducer &r, std::uintptr_t in, std::uint64_t outer, std::uint64_t len,
              std::uint64_t inner, std::uintptr_t out, std::uintptr_t stream, int device) {
             make_current(device);
             r.reduce_axis(reinterpret_cast<const void *>(in), {outer, len, inner},
                           reinterpret_cast<void *>(out), reinterpret_cast<cudaStream_t>(stream));
           },
           nb::arg("data_ptr"), nb::arg("outer"), nb::arg("r"), nb::arg("inner"),
           nb::arg("out_ptr"), nb::arg("stream") = 0, nb::arg("device") = -1)
      .def("axis_choice",
           [](rt::reducer &r, std::uint64_t outer, std::uint64_t len, std::uint64_t inner,
              int device) {
             make_current(device);
             return axis_choice_dict(r.choice_axis({outer, len, inner}));
           },
           nb::arg("outer"), nb::arg("r"), nb::arg("inner"), nb::arg("device") = -1);
  m.def("axis_rule",
        [](std::uint64_t outer, std::uint64_t r, std::uint64_t inner,
           const std::string &determinism, const std::string &dtype) {
          const auto pick = rt::axis_rule({outer, r, inner},
                                          rt::axis_determinism_from(determinism),
                                          rt::dtype_from_string(dtype));
          return nb::make_tuple(pick.preset, pick.why);
        },
        nb::arg("outer"), nb::arg("r"), nb::arg("inner"), nb::arg("determinism") = "run_to_run",
        nb::arg("dtype") = "float32",
        "The axis call's built-in rule (runtime/axis_dispatch.hpp): (preset, why); "
        "determinism run_to_run or batch_invariant (chosen from r and inner alone); the "
        "element type picks 16-byte loads for short rows of the 2-byte types.");
  m.def(
      "axis_levels",
      [] {
        std::vector<std::string> out;
        for (const auto d : rt::axis_determinisms) out.push_back(rt::to_string(d));
        return out;
      },
      "The axis call's determinism levels, the default first (runtime/axis_dispatch.hpp).");
  m.def("axis_bucket",
        [](std::uint64_t outer, std::uint64_t r, std::uint64_t inner) {
          const auto b = rt::bucket_of({outer, r, inner});
          return nb::make_tuple(b.rows, b.log2_r, b.log2_outputs);
        },
        nb::arg("outer"), nb::arg("r"), nb::arg("inner"),
        "The bucket an axis table entry answers: (rows, round(log2 r), round(log2 outputs)).");
}

} // namespace

void bind_reducer(nb::module_ &m) {
  auto reducer = nb::class_<rt::reducer>(m, "Reducer");
  reducer
      .def("__init__",
           [](rt::reducer *self, const std::string &type, const std::string &op,
              std::optional<std::string> database, std::optional<std::string> table,
              bool nondeterministic, bool allow_flagged, std::optional<std::string> cache_dir,
              bool log_fallbacks, std::optional<double> extra_launch_s,
              const std::vector<axis_row> &axis_table, const std::string &axis_determinism) {
             new (self) rt::reducer(make_reducer(type, op, database, table, nondeterministic,
                                                 allow_flagged, cache_dir, log_fallbacks,
                                                 extra_launch_s, axis_entries(axis_table),
                                                 axis_determinism));
           },
           nb::arg("dtype"), nb::arg("op"), nb::arg("database") = nb::none(),
           nb::arg("table") = nb::none(), nb::arg("nondeterministic") = false,
           nb::arg("allow_flagged") = false, nb::arg("cache_dir") = nb::none(),
           nb::arg("log_fallbacks") = true, nb::arg("extra_launch_s") = nb::none(),
           nb::arg("axis_table") = std::vector<axis_row>{},
           nb::arg("axis_determinism") = "run_to_run")
      .def_static("for_point",
                  [](const py_point &point, std::optional<std::string> cache_dir) {
                    rt::reducer_options o;
                    o.cache_dir = cache_dir.value_or("");
                    o.log_fallbacks = false;
                    return rt::reducer::for_point(*point.space, point.p, std::move(o));
                  },
                  nb::arg("point"), nb::arg("cache_dir") = nb::none(),
                  "One point at every size, of its type and operator (reducer.hpp, "
                  "for_point): what calibrate times.")
      // Enqueues and returns: the GIL stays held, a launch takes microseconds. `device`
      // becomes current first: this extension's CUDA runtime is its own (static), so the
      // device PyTorch or CuPy made current is not current here until said.
      .def("reduce",
           [](rt::reducer &r, std::uintptr_t in, std::uint64_t n, std::uintptr_t out,
              std::uintptr_t stream, int device) {
             make_current(device);
             r.reduce(reinterpret_cast<const void *>(in), n, reinterpret_cast<void *>(out),
                      reinterpret_cast<cudaStream_t>(stream));
           },
           nb::arg("data_ptr"), nb::arg("n"), nb::arg("out_ptr"), nb::arg("stream") = 0,
           nb::arg("device") = -1)
      .def("choice",
           [](rt::reducer &r, std::uint64_t n, int device) {
             make_current(device);
             return choice_dict(r.choice(n));
           },
           nb::arg("n"), nb::arg("device") = -1)
      .def("fallbacks", &rt::reducer::fallbacks)
      .def_prop_ro("dtype", [](const rt::reducer &r) { return rt::to_string(r.type()); })
      .def_prop_ro("op", [](const rt::reducer &r) { return rt::to_string(r.op()); });
  m.def("array_info", &array_info, nb::arg("array"));
  bind_axis(reducer, m);
}

} // namespace rtpy
