// The half types (float16, bfloat16; issue 26 item 1) with NVRTC, no GPU: every preset of the
// families that take them compiles for both types and every operator, the others refuse them
// by a stated constraint, the kernels' partials are float32 (read from the mangled kernel
// signatures), and a half type's result may be asked in float32 (the kernels' Out argument).
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"

#include <string>
#include <vector>

using namespace reducetune;

namespace {

constexpr dtype half_types[] = {dtype::float16, dtype::bfloat16};

family embedded(const std::string &name) {
  return family::load(template_library::embedded(), name);
}

struct batch {
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
};

// Every preset of `f` valid for a half type, as requests for `arch`. A preset that is not
// valid must be refused by a constraint whose reason is printed (the atomic finish).
batch half_presets(const family &f, const std::string &arch, std::size_t &refused) {
  batch b;
  for (const dtype t : half_types)
    for (const reduce_op o : all_ops) {
      const search_space s(f, t, o, device_limits::for_arch(arch));
      for (const auto &p : s.presets()) {
        const auto verdict = s.check(p.point, p.launch);
        if (!verdict) {
          INFO(f.name << "." << p.name << " " << to_string(t) << "." << to_string(o));
          CHECK(!verdict.reasons().empty());
          ++refused;
          continue;
        }
        b.requests.push_back(request_for(f, p.point, std::stoi(arch.substr(3))));
        b.labels.push_back(to_label(f, p.point));
      }
    }
  return b;
}

std::size_t failures_of(const batch &b, const std::vector<compile_outcome> &outcomes) {
  std::size_t failed = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    if (!outcomes[i].program) {
      ++failed;
      UNSCOPED_INFO(b.labels[i] << ": " << outcomes[i].error.substr(0, 3000));
    }
  return failed;
}

} // namespace

TEST_CASE("every tunable and axis preset compiles for float16 and bfloat16 and every operator",
          "[jit][half][slow]") {
  compiler c(template_library::embedded());
  for (const std::string arch : {"sm_80", "sm_90"})
    for (const std::string name : {"tunable", "axis"}) {
      INFO(name << " " << arch);
      std::size_t refused = 0;
      const batch b = half_presets(embedded(name), arch, refused);
      // tunable: 4 presets x 2 types x 4 operators, none of them atomic; axis: all valid.
      CHECK(refused == 0);
      CHECK(b.requests.size() == embedded(name).presets.size() * 2 * 4);
      const auto outcomes = c.compile_batch(b.requests);
      CHECK(failures_of(b, outcomes) == 0);
    }
}

TEST_CASE("families that reduce in the element type refuse the half types, saying why",
          "[jit][half]") {
  for (const std::string name : {"seeds", "cascade", "nested"})
    for (const dtype t : half_types) {
      const search_space s(embedded(name), t, reduce_op::sum, device_limits::for_arch("sm_90"));
      INFO(name << " " << to_string(t));
      CHECK(s.valid_size() == 0);
      for (const auto &p : s.presets())
        CHECK(s.check(p.point, p.launch).reasons().find("16 bits") != std::string::npos);
    }
  // The tunable family refuses only the atomic finish (it combines in the element type).
  const search_space s(embedded("tunable"), dtype::bfloat16, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  const point atomic = s.point_of({{"finish", std::string("atomic")}});
  CHECK(s.check(atomic).reasons().find("16 bits") != std::string::npos);
  const search_space f32(embedded("tunable"), dtype::float32, reduce_op::sum,
                         device_limits::for_arch("sm_90"));
  CHECK(f32.check(f32.point_of({{"finish", std::string("atomic")}})).ok());
}

TEST_CASE("only half-type compiles get the toolkit's fp16/bf16 headers", "[jit][half]") {
  const family f = embedded("tunable");
  const auto limits = device_limits::for_arch("sm_90");
  for (const dtype t : all_dtypes) {
    const search_space s(f, t, reduce_op::sum, limits);
    const auto r = request_for(f, s.presets().front().point, 90);
    INFO(to_string(t));
    // Other types' options, hence their cache keys and cubins, are what they were.
    CHECK(r.extra_options.empty() == !is_half(t));
    if (is_half(t)) CHECK(r.extra_options.front() == "--include-path=" + half_headers_folder());
  }
}

TEST_CASE("half-type kernels keep their partials in float32 and may write a float32 result",
          "[jit][half]") {
  compiler c(template_library::embedded());
  compile_request r;
  r.source_path = "tunable/tunable.cuh";
  r.include_folders = {"common"};
  r.arch = "sm_90";
  r.extra_options = {"--include-path=" + half_headers_folder(), "-DRT_HALF_TYPES=1"};
  const std::string args = "rt::op_sum, 256, 4, 4, rt::warp_strategy::shuffle, "
                           "rt::block_strategy::warp_partials, rt::finish::two_pass";
  const std::string pass_bf16 = "rt::tunable::pass<__nv_bfloat16, " + args + ">";
  const std::string pass_f32_out = "rt::tunable::pass_out<__half, " + args + ", float>";
  const std::string final_half = "rt::tunable::final_pass<__half, rt::op_sum, 256, "
                                 "rt::warp_strategy::shuffle, rt::block_strategy::tree>";
  const std::string final_f32_out = "rt::tunable::final_pass_out<__half, rt::op_max, 256, "
                                    "rt::warp_strategy::shuffle, rt::block_strategy::tree, float>";
  r.name_expressions = {pass_bf16, pass_f32_out, final_half, final_f32_out};
  const auto program = c.compile(r);
  for (const auto &n : r.name_expressions) UNSCOPED_INFO(n << " -> " << program->mangled(n));
  // The ABI entries keep their declared T * partials (their mangled names are those of the
  // existing types'); the float32-output entries declare rt::accumulator<T>::type.
  CHECK(program->mangled(pass_f32_out).find("yPNS_11accumulatorI") != std::string::npos);
  CHECK(program->mangled(final_f32_out).find("EEvPKNS_11accumulatorI") != std::string::npos);
  // That type is float32: from_acc<__half, Out> accepts Out = float only because
  // accumulator<__half>::type is float (it accepts T and acc_t<T> alone, static_assert),
  // and final_f32_out compiled above.
  // Any other output type is refused at compile time (static_assert in from_acc).
  compile_request bad = r;
  bad.name_expressions = {"rt::tunable::final_pass_out<__half, rt::op_sum, 256, "
                          "rt::warp_strategy::shuffle, rt::block_strategy::tree, double>"};
  CHECK_THROWS_AS(c.compile(bad), compile_error);
}
