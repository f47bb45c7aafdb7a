// What the command line asks of the exporter before it touches a file: whether a text may name
// the namespace of an exported header (db/reducetune/db/cxx_names.hpp decides it once).
#include "common.hpp"

#include "reducetune/db/cxx_names.hpp"

namespace rtpy {

void bind_export_names(nb::module_ &m) {
  m.def(
      "namespace_problem", [](const std::string &ns) { return rt::db::namespace_problem(ns); },
      nb::arg("namespace"),
        "Why the text cannot name an exported header's C++ namespace ('' when it can).");
}

} // namespace rtpy
