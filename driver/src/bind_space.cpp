// Families and search spaces: declarations, checks with reasons, enumeration, labels, presets.
// Nothing here compiles or touches a GPU.
#include "common.hpp"
#include "py_point.hpp"

#include "reducetune/jit/content_hash.hpp"
#include "reducetune/space/device_limits.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/space.hpp"

namespace rtpy {
namespace {

// The names of every value in one of the core's lists (all_dtypes, all_ops), in its order.
template <typename E, std::size_t N> std::vector<std::string> names_of(const E (&all)[N]) {
  std::vector<std::string> out;
  for (const auto e : all)
    out.emplace_back(rt::to_string(e));
  return out;
}

nb::dict parameter_dict(const rt::parameter &p) {
  nb::dict d;
  d["name"] = p.name;
  d["kind"] = p.kind == rt::parameter_kind::compile ? "compile" : "launch";
  std::vector<rt::value> values;
  nb::dict flags;
  for (const auto &v : p.values) {
    values.push_back(v.v);
    if (!v.flag.empty())
      flags[nb::cast(rt::to_string(v.v))] = v.flag;
  }
  d["values"] = values;
  d["default"] = p.default_value();
  d["label"] = p.label.empty() ? p.name : p.label;
  d["flags"] = flags;
  d["note"] = p.note;
  return d;
}

nb::dict family_dict(const rt::family &f) {
  nb::dict d;
  d["name"] = f.name;
  d["description"] = f.description;
  nb::list ps;
  for (const auto &p : f.parameters)
    ps.append(parameter_dict(p));
  d["parameters"] = ps;
  std::vector<std::pair<std::string, std::string>> cs;
  for (const auto &c : f.constraints)
    cs.emplace_back(c.expr.text(), c.why);
  d["constraints"] = cs;
  nb::list presets;
  for (const auto &p : f.presets) {
    nb::dict pd;
    pd["name"] = p.name;
    pd["values"] = p.values;
    pd["note"] = p.note;
    presets.append(pd);
  }
  d["presets"] = presets;
  d["abi"] = f.abi; // the kernels' argument list: "whole_array" or "axis" (tuned per shape)
  d["requires_rdc"] = f.requires_rdc;
  d["expected"] = f.expected;
  return d;
}

// Every file the family's kernels are compiled from, hashed: measurements made with other
// template sources never mix with these (the store keys measurements by it).
std::string template_hash(const std::string &family) {
  const rt::family &f = family_named(family);
  rt::content_hash h;
  std::vector<std::string> folders{f.name};
  folders.insert(folders.end(), f.includes.begin(), f.includes.end());
  for (const auto &folder : folders)
    for (const auto &path : library().paths_under(folder + "/")) {
      h.field(path);
      h.field(library().read(path).value_or(""));
    }
  return h.hex();
}

} // namespace

void bind_space(nb::module_ &m) {
  nb::class_<rt::device_limits>(m, "DeviceLimits")
      .def(nb::init<>())
      .def_rw("arch", &rt::device_limits::arch)
      .def_rw("max_threads_per_block", &rt::device_limits::max_threads_per_block)
      .def_rw("max_shared_per_block", &rt::device_limits::max_shared_per_block)
      .def_rw("max_shared_per_block_optin", &rt::device_limits::max_shared_per_block_optin)
      .def_rw("sm_count", &rt::device_limits::sm_count)
      .def_rw("warp_size", &rt::device_limits::warp_size)
      .def("__repr__", [](const rt::device_limits &l) {
        return "DeviceLimits(arch=" + std::to_string(l.arch) +
               ", sm_count=" + std::to_string(l.sm_count) + ")";
      });

  m.def("limits_for_arch", &rt::device_limits::for_arch, nb::arg("arch"),
        "Device limits from the architecture table (\"sm_90\", \"90\" or \"9.0\").");
  m.def("known_archs", &rt::device_limits::known_archs);
  m.def("set_templates", &set_templates, nb::arg("directory"),
        "Reads families from this folder instead (\"\": REDUCETUNE_TEMPLATE_DIR or embedded).");
  m.def("templates_origin", [] { return library().origin(); });
  m.def("families", [] {
    return list_of(library().families(),
                   [](const std::string &name) { return family_dict(family_named(name)); });
  });
  m.def("family", [](const std::string &name) { return family_dict(family_named(name)); },
        nb::arg("name"));
  m.def("template_hash", &template_hash, nb::arg("family"));
  // The element types and operators the core reduces (space/element.hpp all_dtypes,
  // all_ops): Python takes its lists from here instead of restating them.
  m.def("dtypes", [] { return names_of(rt::all_dtypes); },
        "Every element type's name, in the core's order (space/element.hpp).");
  m.def("operators", [] { return names_of(rt::all_ops); },
        "Every operator's name, in the core's order (space/element.hpp).");
  m.def(
      "element_bytes",
      [](const std::string &dtype) { return rt::size_of(rt::dtype_from_string(dtype)); },
      nb::arg("dtype"), "Bytes of one element of the type (space/element.hpp).");

  bind_points(m);
}

} // namespace rtpy
