// reducetune._core.Space and reducetune._core.Point (py_point.hpp says why).
#include "py_point.hpp"

#include <optional>

#include "reducetune/errors.hpp"
#include "reducetune/space/element.hpp"

#include <nanobind/stl/shared_ptr.h>

#include <functional>

namespace rtpy {
namespace {

using flag_tuple = std::tuple<std::string, std::string, std::string>;

std::vector<flag_tuple> flag_tuples(const py_point &pt) {
  std::vector<flag_tuple> out;
  for (const auto &f : pt.space->flags(pt.p))
    out.emplace_back(f.parameter, f.value, f.why);
  return out;
}

std::vector<std::pair<std::string, std::string>> failures(const rt::check_result &r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &f : r.failures)
    out.emplace_back(f.expr, f.why);
  return out;
}

py_space make_space(const std::string &family, const std::string &dtype, const std::string &op,
                    const rt::device_limits &limits, const std::optional<rt::restriction> &only) {
  return {std::make_shared<const rt::search_space>(family_named(family),
                                                   rt::dtype_from_string(dtype),
                                                   rt::op_from_string(op), limits,
                                                   only.value_or(rt::restriction{}))};
}

nb::dict choices_dict(const py_space &s) {
  nb::dict d;
  for (const auto &[name, values] : s.space->choices())
    d[nb::cast(name)] = values;
  return d;
}

nb::dict proposable_dict(const py_space &s, bool allow_flagged, bool nondeterministic) {
  nb::dict d;
  for (const auto &[name, values] : s.space->choices(rt::point_selection{allow_flagged, !nondeterministic}))
    d[nb::cast(name)] = values;
  return d;
}

nb::list presets_list(const py_space &s) {
  nb::list out;
  for (const auto &p : s.space->presets()) {
    nb::dict d;
    d["name"] = p.name;
    d["point"] = py_point{s.space, {p.point, p.launch}};
    d["note"] = p.note;
    d["reasons"] = failures(s.space->check(p.point, p.launch));
    out.append(d);
  }
  return out;
}

void bind_point_class(nb::module_ &m) {
  nb::class_<py_point>(m, "Point", "One tuning point (variant and launch config) of a Space.")
      .def_prop_ro("family", [](const py_point &p) { return p.family().name; })
      .def_prop_ro("dtype", [](const py_point &p) { return rt::to_string(p.p.compile.type); })
      .def_prop_ro("op", [](const py_point &p) { return rt::to_string(p.p.compile.op); })
      .def_prop_ro("variant_label", &py_point::variant_label)
      .def_prop_ro("launch_label", &py_point::launch_label)
      .def_prop_ro("labels",
                   [](const py_point &p) { return std::make_pair(p.variant_label(), p.launch_label()); })
      .def_prop_ro("params", [](const py_point &p) { return rt::all_parameters(p.family(), p.p); })
      .def_prop_ro("compile_params",
                   [](const py_point &p) { return rt::compile_parameters(p.family(), p.p); })
      .def_prop_ro("launch_params",
                   [](const py_point &p) { return rt::launch_parameters(p.family(), p.p); })
      .def_prop_ro("flags", &flag_tuples, "The flagged values as (parameter, value, why).")
      .def_prop_ro("flagged", [](const py_point &p) { return !p.space->flags(p.p).empty(); })
      .def_prop_ro("determinism",
                   [](const py_point &p) { return rt::to_string(p.space->determinism_of(p.p)); })
      .def_prop_ro("deterministic",
                   [](const py_point &p) {
                     return p.space->determinism_of(p.p) == rt::determinism::run_to_run;
                   })
      .def(
          "grid",
          [](const py_point &p, std::uint64_t n) {
            return p.space->plan_launch(p.p.compile, p.p.launch).grid_for(n);
          },
          nb::arg("n"),
          "Blocks of the first pass at n: the family's grid expression, on the Space's device.")
      .def("to_dict", [](const py_point &p) { return dict_of(p.family(), p.p); },
           "{family, dtype, op, params}: the point as plain values (for JSON; evaluate() and "
           "precompile() take it as they take the Point).")
      .def("__eq__", [](const py_point &a, const py_point &b) { return a.p == b.p; })
      .def("__hash__",
           [](const py_point &p) { // of the typed values, as __eq__ compares them
             return std::hash<rt::variant>{}(p.p.compile) * 1099511628211ull ^
                    std::hash<rt::launch_config>{}(p.p.launch);
           })
      .def("__repr__", [](const py_point &p) {
        return "Point(" + p.variant_label() + ", " + p.launch_label() + ")";
      });
}

void bind_space_class(nb::module_ &m) {
  nb::class_<py_space>(m, "Space",
                       "The search space of one family for one element type, operator and "
                       "device, optionally restricted to some values of some parameters.")
      .def(nb::new_(&make_space), nb::arg("family"), nb::arg("dtype"), nb::arg("op"),
           nb::arg("limits"), nb::arg("restrict") = nb::none())
      .def_prop_ro("family", [](const py_space &s) { return s.space->decl().name; })
      .def_prop_ro("dtype", [](const py_space &s) { return rt::to_string(s.space->type()); })
      .def_prop_ro("op", [](const py_space &s) { return rt::to_string(s.space->op()); })
      .def_prop_ro("limits", [](const py_space &s) { return s.space->limits(); })
      .def_prop_ro("restrict", [](const py_space &s) { return s.space->restricted_to(); })
      .def("choices", &choices_dict, "Every parameter's proposable values, declaration order.")
      .def("proposable", &proposable_dict, nb::arg("allow_flagged") = false,
           nb::arg("nondeterministic") = false,
           "choices() less the values no valid point of the selection takes (space.hpp).")
      .def(
          "selected",
          [](const py_space &s, const py_point &p, bool allow_flagged, bool nondeterministic) {
            return s.space->selected(p.p, {allow_flagged, !nondeterministic});
          },
          nb::arg("point"), nb::arg("allow_flagged") = false, nb::arg("nondeterministic") = false,
          "Whether the selection accepts the point's flags and determinism.")
      .def(
          "base",
          [](const py_space &s, const std::string &name, bool allow_flagged,
             bool nondeterministic) -> std::optional<py_point> {
            const auto p = s.space->base(name, {allow_flagged, !nondeterministic});
            if (!p) return std::nullopt;
            return py_point{s.space, *p};
          },
          nb::arg("name"), nb::arg("allow_flagged") = false, nb::arg("nondeterministic") = false,
          "The starting point (search_space::base): the preset, or the family's first valid "
          "and selected one where the named preset is invalid here; None when none fits.")
      .def("sizes",
           [](const py_space &s) {
             nb::dict d;
             d["size"] = s.space->size();
             d["launch_size"] = s.space->launch_size();
             d["valid_size"] = s.space->valid_size();
             return d;
           })
      .def(
          "point",
          [](const py_space &s, const params &p) { return py_point{s.space, s.space->point_of(p)}; },
          nb::arg("params"), "The point of these parameters (others at their default).")
      .def(
          "parse",
          [](const py_space &s, const std::string &variant_label, const std::string &launch_label) {
            return py_point{s.space, s.space->parse(variant_label, launch_label)};
          },
          nb::arg("variant_label"), nb::arg("launch_label"))
      .def(
          "check", [](const py_space &s, const py_point &p) { return failures(s.space->check(p.p)); },
          nb::arg("point"), "The constraints the point fails as (expression, why); empty: valid.")
      .def("points",
           [](const py_space &s) {
             std::vector<py_point> out;
             for (auto &p : s.space->points())
               out.push_back({s.space, std::move(p)});
             return out;
           },
           "Every valid point, in enumeration order.")
      .def("presets", &presets_list);
}

} // namespace

plain_point point_of_dict(const nb::dict &d) {
  for (const char *key : {"family", "dtype", "op"})
    if (!d.contains(key))
      throw rt::invalid_configuration(std::string{"a point's dict needs \""} + key +
                                      "\" (as Point.to_dict() gives)");
  const rt::family &f = family_named(nb::cast<std::string>(d["family"]));
  const auto given = d.contains("params") ? nb::cast<params>(d["params"]) : params{};
  return {&f, rt::point_from(f, rt::dtype_from_string(nb::cast<std::string>(d["dtype"])),
                             rt::op_from_string(nb::cast<std::string>(d["op"])), given)};
}

nb::dict dict_of(const rt::family &f, const rt::point &p) {
  nb::dict d;
  d["family"] = f.name;
  d["dtype"] = rt::to_string(p.compile.type);
  d["op"] = rt::to_string(p.compile.op);
  d["params"] = rt::all_parameters(f, p);
  return d;
}

void bind_points(nb::module_ &m) {
  bind_point_class(m);
  bind_space_class(m);
}

} // namespace rtpy
