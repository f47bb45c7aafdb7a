// The axis family's side of programmatic dependent launch (issue 26 X): on sm_90 the pass of a
// split finished by final_pass lets its dependents launch at its start
// (griddepcontrol.launch_dependents) and final_pass waits for the pass (griddepcontrol.wait)
// before it reads any partial; no other pass triggers anything; for sm_80 the same kernels
// compile without either instruction (measure/axis_launch.cpp asks for the launch attribute
// only from sm_90 on: tests/cpp/measure/test_axis_programmatic_finish.cpp). Read from the PTX
// of the point's own kernels, compiled from the request the jit layer compiles (its source,
// headers, name expressions and options, PTX instead of a cubin), since the cubin's ELF does
// not name instructions without a disassembler. No GPU needed.
#include "catch.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/name_pattern.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <nvrtc.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace reducetune;

namespace {

const template_library &library() {
  static const template_library lib = template_library::embedded();
  return lib;
}

// The point of `preset` in the axis family for t.sum on sm_90 (the space's validity is arch
// free for these presets; the arch of the PTX is the test's).
point preset_point(dtype t, const std::string &preset) {
  const search_space s(family::load(library(), "axis"), t, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  for (const auto &p : s.presets())
    if (p.name == preset) return {p.point, p.launch};
  FAIL("no axis preset " << preset);
  return {};
}

// A kernel's PTX by role ("pass", "final"): the `.entry` of its lowered name up to the next.
using entries = std::map<std::string, std::string>;

// The PTX, for compute_`arch`, of the request the jit layer would compile for the point at
// that arch, split into its kernels by role.
entries ptx_of(dtype t, const std::string &preset, int arch) {
  const family f = family::load(library(), "axis");
  const point p = preset_point(t, preset);
  const compile_request request = request_for(f, p.compile, arch);
  std::vector<std::string> names, contents; // every header of the request's folders
  for (const auto &folder : request.include_folders)
    for (const auto &path : library().paths_under(folder + "/")) {
      names.push_back(path);
      contents.push_back(*library().read(path));
    }
  std::vector<const char *> name_ptrs, content_ptrs;
  for (std::size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    content_ptrs.push_back(contents[i].c_str());
  }
  const std::string source = *library().read(request.source_path);
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, source.c_str(), request.source_path.c_str(),
                             static_cast<int>(names.size()), content_ptrs.data(),
                             name_ptrs.data()) == NVRTC_SUCCESS);
  const std::unique_ptr<nvrtcProgram, nvrtcResult (*)(nvrtcProgram *)> owner(&prog,
                                                                             nvrtcDestroyProgram);
  const auto roles = kernel_names(f, p.compile);
  for (const auto &[role, expr] : roles)
    REQUIRE(nvrtcAddNameExpression(prog, expr.c_str()) == NVRTC_SUCCESS);
  // The jit layer's options, with a virtual architecture: PTX rather than a cubin.
  std::vector<std::string> options = compiler(library()).options_for(request);
  for (auto &o : options)
    if (o.rfind("--gpu-architecture=", 0) == 0)
      o = "--gpu-architecture=compute_" + std::to_string(arch);
  std::vector<const char *> option_ptrs;
  for (const auto &o : options) option_ptrs.push_back(o.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  std::size_t size = 0;
  REQUIRE(nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS);
  std::string log(size, '\0');
  REQUIRE(nvrtcGetProgramLog(prog, log.data()) == NVRTC_SUCCESS);
  INFO(preset << " for compute_" << arch << ": " << log);
  REQUIRE(compiled == NVRTC_SUCCESS);
  REQUIRE(nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS);
  std::string ptx(size, '\0');
  REQUIRE(nvrtcGetPTX(prog, ptx.data()) == NVRTC_SUCCESS);
  entries out;
  for (const auto &[role, expr] : roles) {
    const char *lowered = nullptr;
    REQUIRE(nvrtcGetLoweredName(prog, expr.c_str(), &lowered) == NVRTC_SUCCESS);
    const std::size_t at = ptx.find(".entry " + std::string(lowered) + "(");
    REQUIRE(at != std::string::npos);
    out[role] = ptx.substr(at, ptx.find(".entry ", at + 1) - at);
  }
  return out;
}

std::size_t count_of(const std::string &text, const std::string &what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Where `what` first occurs in `text`; npos when never.
std::size_t first(const std::string &text, const std::string &what) {
  return text.find(what);
}

constexpr const char *trigger = "griddepcontrol.launch_dependents";
constexpr const char *wait = "griddepcontrol.wait";

} // namespace

TEST_CASE("On sm_90 a split's pass lets the finish launch before it loads anything, and "
          "final_pass waits for the pass before it reads a partial",
          "[jit][axis][pdl]") {
  // a split of long rows, a column tile split across blocks (vector loads, half type), and a
  // column tile of 8-byte elements: the three shapes of a two-launch point
  for (const auto &[t, preset] : {std::pair{dtype::float32, "split_long_rows"},
                                  std::pair{dtype::bfloat16, "tile_columns_vec4_split"},
                                  std::pair{dtype::float64, "tile_columns_split"}}) {
    INFO(preset << " " << to_string(t));
    const entries k = ptx_of(t, preset, 90);
    REQUIRE(k.count("final") == 1);
    const std::string &pass = k.at("pass"), &final = k.at("final");
    CHECK(count_of(pass, trigger) == 1);
    CHECK(count_of(pass, wait) == 0);
    CHECK(first(pass, trigger) < first(pass, "ld.global")); // at the block's start
    CHECK(count_of(final, wait) == 1);
    CHECK(count_of(final, trigger) == 0);
    // the finish's loads are all partials: none before the wait
    REQUIRE(first(final, "ld.global") != std::string::npos);
    CHECK(first(final, wait) < first(final, "ld.global"));
  }
}

TEST_CASE("No pass without a finish kernel lets anything launch early: tile_ticket finishes "
          "itself, a point of split 1 has no second kernel",
          "[jit][axis][pdl]") {
  for (const auto &[t, preset] :
       {std::pair{dtype::float32, "tile_tall_columns_ticket"},
        std::pair{dtype::float32, "warp_rows"}, std::pair{dtype::bfloat16, "thread_columns"},
        std::pair{dtype::float32, "block_rows"}}) {
    INFO(preset << " " << to_string(t));
    const entries k = ptx_of(t, preset, 90);
    CHECK(count_of(k.at("pass"), "griddepcontrol") == 0);
  }
}

TEST_CASE("For sm_80 the split's kernels compile without griddepcontrol, which sm_80 lacks",
          "[jit][axis][pdl]") {
  for (const auto &[t, preset] : {std::pair{dtype::float32, "split_long_rows"},
                                  std::pair{dtype::bfloat16, "tile_columns_vec4_split"}}) {
    INFO(preset << " " << to_string(t));
    const entries k = ptx_of(t, preset, 80);
    CHECK(count_of(k.at("pass"), "griddepcontrol") == 0);
    CHECK(count_of(k.at("final"), "griddepcontrol") == 0);
    CHECK(count_of(k.at("final"), "ld.global") > 0); // the finish is still there
  }
}

TEST_CASE("Every axis preset compiles to a cubin for sm_80 and sm_90, float32 and bfloat16",
          "[jit][axis][pdl][slow]") {
  // The guard (#if __CUDA_ARCH__ >= 900) is what keeps sm_80 builds working; the real compile
  // path (compile_batch: cubins, name expressions) of every preset, both kernels, both arches.
  const family f = family::load(library(), "axis");
  compiler jit(library());
  for (const int arch : {80, 90}) {
    std::vector<compile_request> requests;
    std::vector<std::string> labels;
    for (const dtype t : {dtype::float32, dtype::bfloat16}) {
      const search_space s(f, t, reduce_op::sum,
                           device_limits::for_arch("sm_" + std::to_string(arch)));
      for (const auto &p : s.presets()) {
        // vec 8 is for the 2-byte types only (16-byte loads); every other preset is valid
        if (const auto verdict = s.check(p.point, p.launch); !verdict) {
          INFO(p.name << " " << to_string(t) << " sm_" << arch);
          CHECK(verdict.reasons().find("16 bytes") != std::string::npos);
          continue;
        }
        requests.push_back(request_for(f, p.point, arch));
        labels.push_back(p.name + " " + to_string(t) + " sm_" + std::to_string(arch));
      }
    }
    REQUIRE(requests.size() >= 32); // both types: at least 16 presets each
    const auto outcomes = jit.compile_batch(requests);
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      INFO(labels[i] << ": " << outcomes[i].error.substr(0, 3000));
      REQUIRE(outcomes[i].program);
      CHECK(outcomes[i].program->cubin.compare(0, 4,
                                               "\x7f"
                                               "ELF") == 0);
      for (const auto &name : requests[i].name_expressions)
        CHECK(!outcomes[i].program->mangled(name).empty());
    }
  }
}
