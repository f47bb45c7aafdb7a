// The label forms of evaluate() and precompile(): the driver's GPU evaluator still sends a
// point to its worker process as two labels over JSON (driver/reducetune/evaluate/gpu.py,
// experiments/_ncu_probe.py), and reading a label back is the store's job, not a binding's.
// The typed forms (bind_device.cpp, bind_compile.cpp) take a Point or Point.to_dict(); once
// the driver sends those, this file goes, and tests/python/test_label_parsing.py loses its
// entry for it.
#include "common.hpp"
#include "py_point.hpp"

#include "reducetune/space/point.hpp"

namespace rtpy {
namespace {

// The family a variant label names: its first part ("tunable" of "tunable.float32.sum...").
const rt::family &family_of(const std::string &variant_label) {
  return family_named(variant_label.substr(0, variant_label.find('.')));
}

} // namespace

void bind_label_forms(nb::module_ &m) {
  m.def(
      "evaluate",
      [](const std::string &variant_label, const std::string &launch_label,
         const nb::dict &workload, int ordinal, const nb::dict &options) {
        const rt::family &f = family_of(variant_label);
        return evaluate_point(f, rt::parse_point(f, variant_label, launch_label), workload,
                              ordinal, options);
      },
      nb::arg("variant_label"), nb::arg("launch_label"), nb::arg("workload"),
      nb::arg("ordinal") = 0, nb::arg("options") = nb::dict());
  m.def(
      "precompile",
      [](const std::vector<std::string> &variant_labels, const std::string &arch,
         unsigned threads) {
        std::vector<variant_job> jobs;
        for (const auto &label : variant_labels) {
          const rt::family &f = family_of(label);
          jobs.push_back({&f, rt::parse_variant_label(f, label)});
        }
        return precompile_variants(jobs, arch, threads);
      },
      nb::arg("variant_labels"), nb::arg("arch") = "sm_90", nb::arg("threads") = 0u);
}

} // namespace rtpy
