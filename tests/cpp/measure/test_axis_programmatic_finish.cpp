// Which axis plans launch their finish kernel with programmatic dependent launch (issue 26 X):
// a split finished by final_pass on a device of compute capability 9.0 or later asks
// cuLaunchKernelEx for programmatic stream serialization; on 8.x, for a point with no finish
// kernel (split 1) and for tile_ticket (its pass finishes itself) it asks for nothing. The
// decision is the plan's, taken once from the space's device limits (plan_axis), and the
// launch's attributes follow it. No GPU needed: what the kernels do with it is
// tests/cpp/jit/test_axis_programmatic_launch.cpp, the bits the GPU tests (gpu_test_axis,
// gpu_test_axis_finish, gpu_test_axis_ticket).
#include "catch.hpp"

#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/templates/template_library.hpp"

#include <string>

using namespace reducetune;

namespace {

search_space axis_space(const std::string &arch, dtype t = dtype::float32) {
  return {family::load(template_library::embedded(), "axis"), t, reduce_op::sum,
          device_limits::for_arch(arch)};
}

point preset(const search_space &s, const std::string &name) {
  for (const auto &p : s.presets())
    if (p.name == name) return {p.point, p.launch};
  FAIL("no axis preset " << name);
  return {};
}

// The plan of `name` at `shape` for a device of `arch`.
axis_plan plan_of(const std::string &arch, const std::string &name, reduction_shape shape,
                  dtype t = dtype::float32) {
  const search_space s = axis_space(arch, t);
  return plan_axis(s, preset(s, name), shape);
}

bool asks_programmatic(const axis_plan &plan) {
  const launch_attributes a = finish_attributes(plan);
  if (a.count == 0) return false;
  REQUIRE(a.count == 1);
  CHECK(a.values[0].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
  CHECK(a.values[0].value.programmaticStreamSerializationAllowed == 1);
  return true;
}

} // namespace

TEST_CASE("griddepcontrol exists from sm_90 on: the finish is launched programmatically there "
          "and only there",
          "[measure][axis][pdl]") {
  CHECK_FALSE(finish_programmatically(80));
  CHECK_FALSE(finish_programmatically(86));
  CHECK_FALSE(finish_programmatically(89));
  CHECK(finish_programmatically(90));
  CHECK(finish_programmatically(100));
  CHECK(finish_programmatically(120));
}

TEST_CASE("A split's finish asks for programmatic stream serialization on cc 9.0 and later, "
          "and for no attribute on 8.x",
          "[measure][axis][pdl]") {
  // split 32 over 3 long rows, and a column tile split 4 (the bfloat16 column shapes' kind)
  for (const auto &arch : {"sm_90", "sm_100", "sm_120"}) {
    INFO(arch);
    const axis_plan rows = plan_of(arch, "split_long_rows", {3, 1 << 20, 1});
    REQUIRE(rows.finish_kernel());
    CHECK(rows.programmatic_finish);
    CHECK(asks_programmatic(rows));
    const axis_plan columns =
        plan_of(arch, "tile_columns_vec4_split", {1, 8192, 32768}, dtype::bfloat16);
    REQUIRE(columns.finish_kernel());
    CHECK(asks_programmatic(columns));
  }
  for (const auto &arch : {"sm_80", "sm_86", "sm_89"}) {
    INFO(arch);
    const axis_plan rows = plan_of(arch, "split_long_rows", {3, 1 << 20, 1});
    REQUIRE(rows.finish_kernel()); // the same two launches, each a plain one
    CHECK(rows.launches() == 2);
    CHECK_FALSE(rows.programmatic_finish);
    CHECK_FALSE(asks_programmatic(rows));
  }
}

TEST_CASE("A plan without a finish kernel asks for nothing, on any device: split 1, and "
          "tile_ticket, which finishes in its pass",
          "[measure][axis][pdl]") {
  const axis_plan warp = plan_of("sm_90", "warp_rows", {1000, 4097, 1});
  CHECK(warp.launches() == 1);
  CHECK_FALSE(warp.programmatic_finish);
  CHECK_FALSE(asks_programmatic(warp));
  const axis_plan ticket = plan_of("sm_90", "tile_tall_columns_ticket", {3, 1 << 20, 200});
  CHECK(ticket.split == 512);
  CHECK_FALSE(ticket.finish_kernel());
  CHECK_FALSE(ticket.programmatic_finish);
  CHECK_FALSE(asks_programmatic(ticket));
  // A plan whose flag a caller set by hand still asks for nothing without a finish kernel.
  axis_plan forced = ticket;
  forced.programmatic_finish = true;
  CHECK_FALSE(asks_programmatic(forced));
}
