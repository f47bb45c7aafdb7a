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
