// reducetune._core.Problem: what is reduced (space/problem.hpp), as one typed value for Python:
// element type, operator and shape (outer, r, inner); the whole array of n elements is
// (1, n, 1). Built validated: a bad shape raises InvalidConfiguration in one line.
#include "common.hpp"

#include "reducetune/space/problem.hpp"

#include <functional>
#include <tuple>

namespace rtpy {
namespace {

using shape_tuple = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;

rt::problem make_problem(const std::string &dtype, const std::string &op, const shape_tuple &s) {
  const rt::problem p{rt::dtype_from_string(dtype), rt::op_from_string(op),
                      {std::get<0>(s), std::get<1>(s), std::get<2>(s)}};
  rt::validate(p);
  return p;
}

} // namespace

void bind_problem(nb::module_ &m) {
  nb::class_<rt::problem>(m, "Problem",
                          "What is reduced: element type, operator and shape (outer, r, inner), "
                          "the middle axis reduced; the whole array of n elements is (1, n, 1).")
      .def(nb::new_(&make_problem), nb::arg("dtype"), nb::arg("op"), nb::arg("shape"))
      .def_static(
          "whole_array",
          [](const std::string &dtype, const std::string &op, std::uint64_t n) {
            return make_problem(dtype, op, {1, n, 1});
          },
          nb::arg("dtype"), nb::arg("op"), nb::arg("n"))
      .def_prop_ro("dtype", [](const rt::problem &p) { return rt::to_string(p.type); })
      .def_prop_ro("op", [](const rt::problem &p) { return rt::to_string(p.op); })
      .def_prop_ro("shape",
                   [](const rt::problem &p) {
                     return shape_tuple{p.shape.outer, p.shape.r, p.shape.inner};
                   })
      .def_prop_ro("is_whole_array", &rt::problem::is_whole_array)
      .def_prop_ro("elements", &rt::problem::elements, "outer x r x inner: elements read.")
      .def_prop_ro("outputs", &rt::problem::outputs, "outer x inner: results written.")
      .def_prop_ro("bytes_read_and_written", &rt::problem::bytes_read_and_written,
                   "Bytes an axis reduction moves: elements read and outputs written.")
      .def_prop_ro("label", [](const rt::problem &p) { return rt::to_label(p); },
                   "'float32.sum.(1,1048576,1)', for people (never parsed back).")
      .def("__eq__", [](const rt::problem &a, const rt::problem &b) { return a == b; },
           nb::is_operator())
      .def("__hash__", [](const rt::problem &p) { return std::hash<std::string>{}(rt::to_label(p)); })
      .def("__repr__", [](const rt::problem &p) { return "Problem(" + rt::to_label(p) + ")"; });
}

} // namespace rtpy
