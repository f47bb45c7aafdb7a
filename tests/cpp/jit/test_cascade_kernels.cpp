// The cascade family compiles the tunable family's kernel, not a copy of it: its two-pass and
// host-finish points and tunable's `good` preset lower to the same mangled pass kernel, so that
// the experiment's sweep measures one kernel whichever family a point belongs to. No GPU needed.
#include "catch.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"

using namespace reducetune;

namespace {

std::string lowered_pass(compiler &c, const template_library &lib, const std::string &family_name,
                         const parameter_map &params) {
  const family f = family::load(lib, family_name);
  const search_space s(f, dtype::float32, reduce_op::sum, device_limits::for_arch("sm_90"));
  const point p = s.point_of(params);
  const compile_request r = request_for(f, p.compile, 90);
  const auto program = c.compile(r);
  return program->mangled(s.plan_launch(p.compile, p.launch).kernels.at("pass"));
}

} // namespace

TEST_CASE("the cascade family's pass is the tunable family's good kernel", "[jit][cascade]") {
  const template_library lib = template_library::embedded();
  compiler c(lib);
  const std::string tunable = lowered_pass(c, lib, "tunable", {});
  CHECK(tunable.rfind("_Z", 0) == 0);
  CHECK(lowered_pass(c, lib, "cascade", {{"finish", std::string("two_pass")}}) == tunable);
  CHECK(lowered_pass(c, lib, "cascade", {{"finish", std::string("host")}}) == tunable);
}
