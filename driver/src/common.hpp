// Shared pieces of the reducetune._core bindings: the template library and families loaded
// once per process, conversions between Python dicts and the core's plain data.
//
// The extension exposes coarse calls only (STYLE.md habit 8): Python passes and receives
// dicts of plain values, never handles into the core's internals.
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/templates/template_library.hpp"
#include "reducetune/measure/workload.hpp"
#include "reducetune/space/family.hpp"
#include "reducetune/space/variant.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>

namespace reducetune {
class compile_ahead; // jit/compile_ahead.hpp
}

namespace rtpy {

namespace nb = nanobind;
namespace rt = reducetune;

// name -> value for compile and launch parameters alike.
using params = std::map<std::string, rt::value>;

// The library named by REDUCETUNE_TEMPLATE_DIR, or embedded; set_templates() replaces it.
const rt::template_library &library();
void set_templates(const std::string &dir); // "" = back to the environment / embedded
const rt::family &family_named(const std::string &name);
// The process-wide compiler (its memory cache serves repeated evaluations of a variant).
rt::compiler &shared_compiler();
// The background threads compiling into shared_compiler()'s cache (bind_compile.cpp), made
// with `threads` at the first call; they stop with the compiler (set_templates, exit).
rt::compile_ahead &shared_compile_ahead(unsigned threads);
// Drops what waits and joins the threads. Registered with Python's atexit (bind_compile.cpp):
// at the C++ statics' destruction a thread still compiling would read statics already gone.
void stop_compile_ahead();

// Parameters not named take their default; a name the family does not declare is an error.
rt::variant to_variant(const rt::family &f, rt::dtype t, rt::reduce_op o, const params &p);
rt::launch_config to_launch(const rt::family &f, const params &p);
params to_params(const rt::family &f, const rt::variant &v, const rt::launch_config &c);
params to_params(const rt::family &f, const rt::variant &v);

rt::workload to_workload(const nb::dict &d);
// Makes CUDA device `device` current in this extension (device < 0: leaves it); a device that
// cannot be used throws device_error naming it.
void make_current(int device);
nb::dict device_to_dict(const rt::device_info &d);

// The facts a device and its row in a results file both hold (rt::device_info,
// db::device_record), under the same keys, the peak by the one formula: a dict of either
// starts from this one.
template <class Device> nb::dict device_model_dict(const Device &r) {
  nb::dict d;
  d["name"] = r.name;
  d["uuid"] = r.uuid;
  d["cc_major"] = r.cc_major;
  d["cc_minor"] = r.cc_minor;
  d["sm_count"] = r.sm_count;
  d["l2_bytes"] = r.l2_bytes;
  d["bus_width_bits"] = r.bus_width_bits;
  d["memory_clock_khz"] = r.memory_clock_khz;
  d["driver_version"] = r.driver_version;
  d["peak_bytes_per_s"] = rt::theoretical_peak_bytes_per_s(
      static_cast<std::uint64_t>(r.memory_clock_khz), static_cast<std::uint64_t>(r.bus_width_bits));
  return d;
}

template <class T> T get_or(const nb::dict &d, const char *key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? nb::cast<T>(d[key]) : fallback;
}

// A Python list of each row as to_dict makes it (rows as flat dicts, one key per column).
template <class Rows, class ToDict> nb::list list_of(const Rows &rows, ToDict to_dict) {
  nb::list out;
  for (const auto &r : rows)
    out.append(to_dict(r));
  return out;
}

void bind_errors(nb::module_ &m);
void bind_protocol(nb::module_ &m);
void bind_space(nb::module_ &m);
void bind_problem(nb::module_ &m);
void bind_compile(nb::module_ &m);
void bind_device(nb::module_ &m);
void bind_store(nb::module_ &m);
void bind_reducer(nb::module_ &m);
void bind_app_timing(nb::module_ &m);
void bind_export_names(nb::module_ &m);

} // namespace rtpy
