// The axis family (kernel_templates/axis, issue 26): every preset and a seeded sample of its
// points compile with NVRTC for sm_90 for every element type and operator, invalid points
// are refused with their reason before any compile, and the shape built-ins give the grid the
// family declares. No GPU needed; tests/cpp/gpu_test_axis.cpp runs the kernels.
#include "axis_grid.hpp"
#include "catch.hpp"
#include "cubin_elf.hpp"
#include "shared_compiler.hpp"

#include "reducetune/db/launch_rule.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/space_jobs.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/builtins.hpp"
#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <nvrtc.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace reducetune;

namespace {

const device_limits sm90 = device_limits::for_arch("sm_90");

family axis_family() {
  return family::load(template_library::embedded(), "axis");
}

// The point with `values` by name, the others at their defaults.
point axis_point(const search_space &s, const parameter_map &values) {
  return s.point_of(values);
}

// The staged point of that tile geometry, the others at their defaults.
point staged_point(const search_space &s, std::int64_t block_size, std::int64_t vec,
                   std::int64_t unroll) {
  return s.point_of({{"strategy", std::string("staged")},
                     {"lanes", std::int64_t{1}},
                     {"block_size", block_size},
                     {"vec", vec},
                     {"unroll", unroll}});
}

using rt_test::grid_at;

std::int64_t let_of(const search_space &s, const point &p, const std::string &name) {
  return expression::parse(name).eval_int(s.scope_for(p.compile, p.launch));
}

// The stack frame (local memory bytes a thread: spills, arrays indexed at run time) of each
// kernel of a compiled request, by name expression; every kernel must be in the image.
std::map<std::string, std::uint32_t> frames_of(const compiled_program &program,
                                               const compile_request &request) {
  const auto frames = rt_test::kernel_frame_bytes(program.cubin);
  std::map<std::string, std::uint32_t> out;
  for (const auto &name : request.name_expressions) {
    const auto frame = frames.find(program.mangled(name));
    REQUIRE(frame != frames.end());
    out[name] = frame->second;
  }
  return out;
}

// PTX (compute_90) of `source`, a test's own kernels over the embedded library's common/ and
// axis/ headers, compiled as the jit layer compiles a half-type variant: the instructions a
// kernel issues (shared memory, local memory, vector loads, shuffles), which the cubin's ELF
// does not name without a disassembler.
std::string ptx_of(const std::string &source) {
  const template_library lib = template_library::embedded();
  std::vector<std::string> names, contents;
  for (const char *folder : {"common/", "axis/"})
    for (const auto &path : lib.paths_under(folder)) {
      names.push_back(path);
      contents.push_back(*lib.read(path));
    }
  std::vector<const char *> name_ptrs, content_ptrs;
  for (std::size_t i = 0; i < names.size(); ++i) {
    name_ptrs.push_back(names[i].c_str());
    content_ptrs.push_back(contents[i].c_str());
  }
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, source.c_str(), "staged_ptx.cu", static_cast<int>(names.size()),
                             content_ptrs.data(), name_ptrs.data()) == NVRTC_SUCCESS);
  const std::unique_ptr<nvrtcProgram, nvrtcResult (*)(nvrtcProgram *)> owner(&prog,
                                                                             nvrtcDestroyProgram);
  const std::string include = "--include-path=" + half_headers_folder();
  const char *options[] = {"--gpu-architecture=compute_90",
                           "-std=c++17",
                           "-DRT_NVRTC=1",
                           "-minimal",
                           "-DRT_HALF_TYPES=1",
                           include.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 6, options);
  std::size_t size = 0;
  REQUIRE(nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS);
  std::string log(size, '\0');
  REQUIRE(nvrtcGetProgramLog(prog, log.data()) == NVRTC_SUCCESS);
  INFO(log);
  REQUIRE(compiled == NVRTC_SUCCESS);
  REQUIRE(nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS);
  std::string ptx(size, '\0');
  REQUIRE(nvrtcGetPTX(prog, ptx.data()) == NVRTC_SUCCESS);
  return ptx;
}

// The PTX of one kernel (`.entry name(` up to the next entry), and how often `what` occurs in it.
std::string entry_of(const std::string &ptx, const std::string &name) {
  const std::size_t at = ptx.find(".entry " + name + "(");
  REQUIRE(at != std::string::npos);
  return ptx.substr(at, ptx.find(".entry ", at + 1) - at);
}

std::size_t count_of(const std::string &text, const std::string &what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

} // namespace

TEST_CASE("Every axis preset is a valid point for every type and operator, and compiles for "
          "sm_90 with a sample of the space, the presets' kernels with no local memory",
          "[jit][axis][slow]") {
  const family f = axis_family();
  REQUIRE(f.presets.size() >= 6);
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
  std::vector<bool> presets; // which requests are presets (their kernels keep no local memory)
  std::set<std::string> strategies;
  for (const dtype t : all_dtypes)
    for (const reduce_op o : all_ops) {
      const search_space s(f, t, o, sm90);
      for (const auto &p : s.presets()) {
        INFO(p.name << " " << to_string(t) << "." << to_string(o));
        // one exception: a preset's vector loads are at most 16 bytes, so a vec 8 preset serves
        // the 2-byte types only and a vec 4 one (block_rows_vec4, the column tiles of 128) all
        // but the 8-byte ones, which refuse it; every other preset is valid for every type
        if (let_of(s, point{p.point, p.launch}, "vec") * static_cast<std::int64_t>(size_of(t)) >
            16) {
          CHECK(s.check(p.point, p.launch).reasons().find("16 bytes") != std::string::npos);
          continue;
        }
        REQUIRE(s.check(p.point, p.launch).reasons() == "");
        strategies.insert(to_string(p.point.values.front()));
        requests.push_back(request_for(f, p.point, 90));
        labels.push_back(p.name + " " + to_label(f, p.point));
        presets.push_back(true);
      }
      for (const auto &v : s.sample(3, search_space::default_seed + requests.size())) {
        REQUIRE(s.check(v).ok());
        requests.push_back(request_for(f, v, 90));
        labels.push_back(to_label(f, v));
        presets.push_back(false);
      }
    }
  // Each strategy has at least one preset (the GPU test runs each strategy through them).
  REQUIRE(strategies ==
          std::set<std::string>{"thread", "group", "warp", "block", "split", "tile", "staged",
                                "tile_ticket"});

  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  std::size_t failed = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].program) {
      ++failed;
      UNSCOPED_INFO(labels[i] << ": " << outcomes[i].error.substr(0, 3000));
      continue;
    }
    REQUIRE(outcomes[i].program->cubin.compare(0, 4,
                                               "\x7f"
                                               "ELF") == 0);
    // Both roles are in the image: the finish kernel of split > 1 included.
    for (const auto &name : requests[i].name_expressions)
      REQUIRE(outcomes[i].program->mangled(name).find("axis") != std::string::npos);
    if (!presets[i]) continue;
    // No local memory (a stack frame: an accumulator array indexed at run time, or spills):
    // a column tile that kept its accumulators there ran at 54 % of the H200's peak instead
    // of 81 % (eec02f1). Every preset's kernels, every type and operator.
    for (const auto &[name, frame] : frames_of(*outcomes[i].program, requests[i])) {
      INFO(labels[i] << ", " << name);
      CHECK(frame == 0);
    }
  }
  REQUIRE(failed == 0);
}

TEST_CASE("An invalid axis point is refused with its reason and never selected for compiling",
          "[jit][axis]") {
  const family f = axis_family();
  const search_space s(f, dtype::int64, reduce_op::sum, sm90);
  const auto reasons = [&](const parameter_map &values) {
    return s.check(axis_point(s, values)).reasons();
  };
  CHECK(reasons({{"strategy", std::string("warp")}, {"vec", std::int64_t{4}}})
            .find("at most 16 bytes") != std::string::npos);
  CHECK(
      reasons({{"strategy", std::string("thread")}, {"lanes", std::int64_t{4}}}).find("one lane") !=
      std::string::npos);
  CHECK(reasons({{"strategy", std::string("group")}, {"lanes", std::int64_t{32}}})
            .find("2 to 16 lanes") != std::string::npos);
  CHECK(reasons({{"strategy", std::string("warp")}, {"lanes", std::int64_t{8}}}).find("32 lanes") !=
        std::string::npos);
  CHECK(reasons({{"strategy", std::string("split")}, {"lanes", std::int64_t{1}}})
            .find("at least 2 blocks") != std::string::npos);
  CHECK(reasons({{"strategy", std::string("block")},
                 {"lanes", std::int64_t{1}},
                 {"split", std::int64_t{4}}})
            .find("only split and tile") != std::string::npos);
  CHECK(reasons({{"strategy", std::string("tile")},
                 {"lanes", std::int64_t{8}},
                 {"split", std::int64_t{4}}}) == "");
  CHECK(reasons({{"strategy", std::string("staged")}, {"lanes", std::int64_t{4}}})
            .find("lanes is not used") != std::string::npos);
  // A staged tile of 1024 x 2 x 8 int64 (128 KiB) is over the 48 KiB of static shared memory.
  CHECK(reasons({{"strategy", std::string("staged")},
                 {"lanes", std::int64_t{1}},
                 {"block_size", std::int64_t{1024}},
                 {"vec", std::int64_t{2}},
                 {"unroll", std::int64_t{8}}})
            .find("bytes of shared memory exceed") != std::string::npos);

  job_selection selection;
  selection.family = "axis";
  selection.dtypes = {dtype::int64};
  selection.ops = {reduce_op::sum};
  selection.sample = 100;
  const auto jobs = select_jobs(template_library::embedded(), sm90, selection);
  REQUIRE(jobs.size() >= 100);
  for (const auto &j : jobs) REQUIRE(s.check(parse_variant_label(f, j.label)).ok());
}

TEST_CASE("The axis grid is a function of the shape built-ins, and the whole array is "
          "(1, n, 1) where only n is bound",
          "[space][axis]") {
  for (const char *name : {"outer", "r", "inner", "n"}) CHECK(is_builtin_identifier(name));
  const family f = axis_family();
  const search_space s(f, dtype::float32, reduce_op::sum, sm90);
  const auto preset = [&](const std::string &name) {
    for (const auto &p : s.presets())
      if (p.name == name) return point{p.point, p.launch};
    FAIL("no preset " << name);
    return point{};
  };
  // thread: 256 outputs per block; group of 8 lanes: 32 rows per block; warp: 8 per block.
  CHECK(grid_at(s, preset("thread_columns"), {1, 1000, 1025}) == 5);
  CHECK(grid_at(s, preset("group_short_rows"), {1000, 17, 1}) == 32);
  CHECK(grid_at(s, preset("warp_rows"), {1000, 4097, 1}) == 125);
  CHECK(grid_at(s, preset("block_rows"), {7, 100, 3}) == 21);
  CHECK(grid_at(s, preset("split_long_rows"), {3, 1 << 20, 1}) == 96);
  CHECK(grid_at(s, preset("tile_few_columns"), {1, 1 << 24, 4}) == 512);
  // At most 2^20 blocks: the kernels are grid-stride, more blocks would only queue.
  CHECK(grid_at(s, preset("tile_few_columns"), {1 << 24, 4, 1}) == 1 << 20);
  // tile: 32 lanes x 2 columns = 64 columns per tile, per outer, per split.
  CHECK(grid_at(s, preset("tile_columns"), {3, 100, 130}) == 9);
  CHECK(grid_at(s, preset("tile_columns_split"), {1, 1 << 20, 16}) == 8);
  // staged: tiles of 256 x 2 x 8 = 4096 elements, floor(4096 / r) whole rows each (r = 3:
  // 1365 rows); its fallback's grid (a thread per output) past 32 elements and for inner > 1.
  CHECK(grid_at(s, preset("staged_short_rows"), {1 << 20, 2, 1}) == 512);
  CHECK(grid_at(s, preset("staged_short_rows"), {1 << 20, 3, 1}) == 769);
  CHECK(grid_at(s, preset("staged_short_rows"), {1000, 33, 1}) == 4);
  CHECK(grid_at(s, preset("staged_short_rows"), {3, 17, 1000}) == 12);

  // group and warp on short rows (each lane at most one vector: r <= lanes * vec, or r <= lanes
  // where the rows are strided) take unroll groups of rows per warp step: the grid shrinks by
  // unroll there and nowhere else. group_pairs_vec4: 2 lanes of 4, 16 rows per warp, 128 rows
  // per block, times unroll 2 for rows of up to 8.
  const point pairs = preset("group_pairs_vec4");
  CHECK(grid_at(s, pairs, {1 << 20, 8, 1}) == (1 << 20) / (128 * 2));
  CHECK(grid_at(s, pairs, {1 << 20, 3, 1}) == (1 << 20) / (128 * 2));
  CHECK(grid_at(s, pairs, {1 << 20, 9, 1}) == (1 << 20) / 128);
  CHECK(grid_at(s, pairs, {1000, 2, 3}) == 12); // strided: r <= 2 lanes, 3000 / 256
  CHECK(grid_at(s, pairs, {1000, 3, 3}) == 24); // strided rows of 3: one per 128-row block
  const point warp_short = s.point_of({{"strategy", std::string("warp")},
                                       {"lanes", std::int64_t{32}},
                                       {"vec", std::int64_t{4}},
                                       {"unroll", std::int64_t{8}}});
  CHECK(grid_at(s, warp_short, {1 << 20, 128, 1}) == (1 << 20) / (8 * 8));
  CHECK(grid_at(s, warp_short, {1 << 20, 129, 1}) == (1 << 20) / 8);
  // at 1024 threads at most 2 groups per step (axis_rows.cuh, short_groups_per_step)
  const point wide_block = s.point_of({{"strategy", std::string("group")},
                                       {"lanes", std::int64_t{2}},
                                       {"block_size", std::int64_t{1024}},
                                       {"vec", std::int64_t{4}},
                                       {"unroll", std::int64_t{8}}});
  CHECK(grid_at(s, wide_block, {1 << 20, 8, 1}) == (1 << 20) / (512 * 2));
  CHECK(grid_at(s, preset("warp_rows"), {1000, 32, 1}) == 32); // vec 1, unroll 4: 1000 / 32
  // a thread per output keeps one output per thread, whatever r
  CHECK(grid_at(s, preset("thread_columns"), {1000, 1, 1}) == 4);

  const point warp = preset("warp_rows");
  const launch_plan plan = s.plan_launch(warp.compile, warp.launch);
  CHECK(plan.grid_for(1000) == 1); // one row of 1000: one warp of one block
  CHECK(plan.kernels.count("final") == 1);
}

TEST_CASE("The axis family says which points are batch_invariant and that every point uses "
          "the axis ABI",
          "[space][axis]") {
  const family f = axis_family();
  const search_space s(f, dtype::float64, reduce_op::sum, sm90);
  for (const auto &p : s.presets()) {
    INFO(p.name);
    const point q{p.point, p.launch};
    CHECK(s.scope_for(q.compile, q.launch).get("abi") == value{std::string("axis")});
    // the row presets with vector loads meet a row's elements by its alignment: run_to_run
    const bool row_vectors = p.name == "warp_rows_vec2" || p.name == "block_rows_vec4" ||
                             p.name == "split_rows_vec4" || p.name == "group_pairs_vec4" ||
                             p.name == "group_pairs_vec8";
    CHECK(let_of(s, q, "batch_invariant") == (row_vectors ? 0 : 1));
    CHECK(s.determinism_of(q) == determinism::run_to_run);
  }
  // A row strategy with vector loads meets its elements by the row's alignment: not invariant;
  // a tile's vectors run along inner, so each column's order is still k order.
  CHECK(let_of(s,
               s.point_of({{"strategy", std::string("block")},
                           {"lanes", std::int64_t{1}},
                           {"vec", std::int64_t{2}}}),
               "batch_invariant") == 0);
  CHECK(let_of(s, s.point_of({{"strategy", std::string("tile")}, {"vec", std::int64_t{2}}}),
               "batch_invariant") == 1);
  // staged copies a tile with vector loads but sums each row from shared memory in k order.
  CHECK(let_of(s,
               s.point_of({{"strategy", std::string("staged")},
                           {"lanes", std::int64_t{1}},
                           {"vec", std::int64_t{2}}}),
               "batch_invariant") == 1);
}

TEST_CASE("An axis point is no whole-array point: the whole-array launchers refuse it",
          "[space][axis]") {
  // Its entries take (in, out, outer, r, inner, partials): the runner or the runtime passing
  // (in, out, n, partials, ticket) would fault (it did, in gpu_test_variants), so the plan
  // says which ABI the kernels take, and the exports give such a point no launch rule.
  const family f = axis_family();
  for (const dtype t : {dtype::float32, dtype::int64}) {
    const search_space s(f, t, reduce_op::sum, sm90);
    REQUIRE_FALSE(s.presets().empty());
    for (const auto &p : s.presets()) {
      INFO(p.name);
      if (!s.check(p.point, p.launch).ok()) continue; // vec x size over 16 bytes (int64: vec 4)
      CHECK_FALSE(s.plan_launch(p.point, p.launch).whole_array_abi);
      const auto rule = db::launch_rule_of(s, point{p.point, p.launch});
      REQUIRE(std::holds_alternative<std::string>(rule));
      CHECK(std::get<std::string>(rule).find("axis ABI") != std::string::npos);
    }
  }
  const family tunable = family::load(template_library::embedded(), "tunable");
  const search_space whole(tunable, dtype::float32, reduce_op::sum, sm90);
  for (const auto &p : whole.presets()) CHECK(whole.plan_launch(p.point, p.launch).whole_array_abi);
}

TEST_CASE("Staged points of every tile geometry compile for every element size, 16-byte loads "
          "of the half types included",
          "[jit][axis][staged]") {
  // What gpu_test_axis_staged runs beside the preset: tiles of 64 elements, vec 4 and vec 8
  // (16-byte loads of 4- and 2-byte types), a 1024-thread block.
  const family f = axis_family();
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
  for (const dtype t : {dtype::int32, dtype::float64, dtype::float16, dtype::bfloat16})
    for (const reduce_op o : {reduce_op::sum, reduce_op::max}) {
      const search_space s(f, t, o, sm90);
      for (const auto &[bs, vec, unroll] : {std::tuple{64, 1, 1}, std::tuple{128, 4, 4},
                                            std::tuple{256, 8, 2}, std::tuple{1024, 1, 2}}) {
        const point p = staged_point(s, bs, vec, unroll);
        // vec 8 only for 2-byte types, vec 4 not for 8-byte ones (16 bytes per load at most)
        const bool fits = vec * static_cast<int>(size_of(t)) <= 16;
        INFO(to_string(t) << " " << to_label(f, p.compile) << ": " << s.check(p).reasons());
        REQUIRE(s.check(p).ok() == fits);
        if (!fits) continue;
        requests.push_back(request_for(f, p.compile, 90));
        labels.push_back(std::string(to_string(t)) + " " + to_label(f, p.compile));
      }
    }
  // (int32 3 geometries, float64 2, each half type 4) x 2 operators
  REQUIRE(requests.size() == 26);
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    INFO(labels[i] << ": " << (outcomes[i].program ? "" : outcomes[i].error.substr(0, 3000)));
    CHECK(outcomes[i].program);
  }
}

TEST_CASE("The grid's staged_max_r (the staged value's let) is the kernel's: a compile given the "
          "let passes the kernel's static_assert, one given another value fails it",
          "[jit][axis]") {
  const family f = axis_family();
  const search_space s(f, dtype::float32, reduce_op::sum, sm90);
  const point staged = axis_point(
      s,
      {{"strategy", std::string("staged")}, {"lanes", std::int64_t{1}}, {"vec", std::int64_t{2}}});
  REQUIRE(s.check(staged).ok());
  const std::int64_t let = let_of(s, staged, "staged_max_r");
  // The grid switches to its fallback's (a thread per output) just past the let.
  CHECK(grid_at(s, staged, {1 << 20, static_cast<std::uint64_t>(let), 1}) ==
        static_cast<std::int64_t>((1u << 20) / (256 * 2 * 4 / let)));
  CHECK(grid_at(s, staged, {1 << 20, static_cast<std::uint64_t>(let) + 1, 1}) == (1 << 20) / 256);
  std::vector<compile_request> requests;
  for (const std::int64_t given : {let, let + 1}) {
    compile_request r = request_for(f, staged.compile, 90);
    r.extra_options.push_back("-DRT_AXIS_FAMILY_STAGED_MAX_R=" + std::to_string(given));
    requests.push_back(std::move(r));
  }
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  INFO(outcomes[0].error.substr(0, 2000));
  CHECK(outcomes[0].program != nullptr);
  CHECK(outcomes[1].program == nullptr);
  CHECK(outcomes[1].error.find("staged_max_r let is the kernel's") != std::string::npos);
}

TEST_CASE(
    "Group and warp points that take several short rows per warp step compile for sm_90 "
    "with no local memory, 8 groups in flight of 16-byte loads and 1024-thread blocks included",
    "[jit][axis]") {
  // short_rows_by_lanes holds unroll rows' loads in registers (axis_rows.cuh): a stack frame
  // there would put them in local memory and undo the point of holding them.
  const family f = axis_family();
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
  for (const auto &[t, vec] :
       {std::pair{dtype::bfloat16, 8}, std::pair{dtype::float16, 8}, std::pair{dtype::float32, 4},
        std::pair{dtype::float64, 2}, std::pair{dtype::int32, 1}})
    for (const reduce_op o : {reduce_op::sum, reduce_op::max})
      for (const auto &[strategy, lanes] :
           {std::pair{"group", 2}, std::pair{"group", 16}, std::pair{"warp", 32}})
        for (const auto &[block_size, unroll] :
             {std::pair{256, 4}, std::pair{256, 8}, std::pair{1024, 8}}) {
          const search_space s(f, t, o, sm90);
          const point p = s.point_of({{"strategy", std::string(strategy)},
                                      {"lanes", std::int64_t{lanes}},
                                      {"block_size", std::int64_t{block_size}},
                                      {"vec", std::int64_t{vec}},
                                      {"unroll", std::int64_t{unroll}}});
          INFO(to_label(f, p.compile) << ": " << s.check(p).reasons());
          REQUIRE(s.check(p).ok());
          requests.push_back(request_for(f, p.compile, 90));
          labels.push_back(std::string(to_string(t)) + "." + to_string(o) + " " +
                           to_label(f, p.compile));
        }
  REQUIRE(requests.size() == 90);
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    INFO(labels[i] << ": " << (outcomes[i].program ? "" : outcomes[i].error.substr(0, 3000)));
    REQUIRE(outcomes[i].program);
    for (const auto &[name, frame] : frames_of(*outcomes[i].program, requests[i])) {
      INFO(name);
      CHECK(frame == 0);
    }
  }
}

TEST_CASE("Staged points compile for sm_90 for every element type at every vec and unroll the "
          "space allows, the register paths of rows of whole vectors included",
          "[jit][axis][staged][slow]") {
  // A staged kernel holds every path (rows in vectors, rows of 2 and 4 vectors, shared memory,
  // the fallback): r picks one at run time, so each point compiles them all.
  const family f = axis_family();
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
  for (const dtype t : all_dtypes) {
    const search_space s(f, t, reduce_op::sum, sm90);
    for (const std::int64_t vec : {1, 2, 4, 8})
      for (const std::int64_t unroll : {1, 2, 4, 8}) {
        const point p = staged_point(s, 256, vec, unroll);
        INFO(to_string(t) << " " << to_label(f, p.compile) << ": " << s.check(p).reasons());
        REQUIRE(s.check(p).ok() == (vec * static_cast<std::int64_t>(size_of(t)) <= 16));
        if (!s.check(p).ok()) continue;
        requests.push_back(request_for(f, p.compile, 90));
        labels.push_back(std::string(to_string(t)) + " " + to_label(f, p.compile));
      }
  }
  // vec 1-8 for the 2-byte types, 1-4 for the 4-byte ones, 1-2 for the 8-byte ones; 4 unrolls
  REQUIRE(requests.size() == (2 * 4 + 2 * 3 + 2 * 2) * 4);
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    INFO(labels[i] << ": " << (outcomes[i].program ? "" : outcomes[i].error.substr(0, 3000)));
    REQUIRE(outcomes[i].program);
    // No local memory, but for one point that spilled before the rows of whole vectors had a
    // path: bfloat16 vec 8 unroll 8, 8 bytes at 80 registers (sm_90), whose rows of one element
    // (staged_rows_in_vectors, 8 outputs a vector, 8 vectors a thread) spill alone (nvcc
    // -Xptxas -v of that path by itself: 16 bytes; the rows of 2 and 4 vectors, 48 and 40
    // registers, none).
    const bool spilled_before =
        labels[i].find("bfloat16.sum.s_staged.bs_256.l_1.v_8.u_8") != std::string::npos;
    for (const auto &[name, frame] : frames_of(*outcomes[i].program, requests[i])) {
      INFO(name);
      CHECK(frame <= (spilled_before ? 8u : 0u));
    }
  }
}

TEST_CASE("Bfloat16 rows of 2 vectors of 8 (r = 16) are summed without shared memory: 16-byte "
          "read-only loads, shuffles and one store per row, where staging the same tile takes "
          "16 shared accesses a row",
          "[jit][axis][staged]") {
  // The tiles of staged_short_rows_vec8 (256 threads, vec 8, unroll 4): bfloat16 rows of 16
  // through shared memory reached 56-62 % of the H200's peak (axis_staged.cuh).
  const std::string ptx = ptx_of(R"(#include "axis/axis.cuh"
using bf16 = __nv_bfloat16;
extern "C" __global__ void __launch_bounds__(256)
    of_vectors(const bf16 *__restrict__ in, bf16 *out, unsigned long long outer) {
  rt::axis::staged_rows_of_vectors<bf16, rt::op_sum, 256, 8, 4, 2>(in, out, outer);
}
extern "C" __global__ void __launch_bounds__(256)
    through_shared(const bf16 *__restrict__ in, bf16 *out, unsigned long long outer) {
  rt::axis::staged_rows<bf16, rt::op_sum, 256, 8, 4>(in, out, outer, 16);
}
)");
  const std::string vectors = entry_of(ptx, "of_vectors"), shared = entry_of(ptx, "through_shared");
  INFO(vectors);
  CHECK(count_of(vectors, "st.shared") == 0);
  CHECK(count_of(vectors, "ld.shared") == 0);
  CHECK(count_of(vectors, ".local") == 0);
  // unroll 4 loads of 16 bytes through the read-only path, as stage_tile issues them
  CHECK(count_of(vectors, "ld.global.nc.v4") == 4);
  // 2 rows a thread (4 loads, 2 a row): one shuffle step of a vector's 4 words per row
  CHECK(count_of(vectors, "shfl.sync.bfly.b32") == 8);
  CHECK(count_of(vectors, "st.global") == 2);
  // the contrast, so that the zeros above could have failed: the same tile staged
  CHECK(count_of(shared, "st.shared.u16") >= 8);
  CHECK(count_of(shared, "ld.shared.u16") >= 1);
}

TEST_CASE("The split finish issues a lane's batch of partial loads before it combines any: 16 "
          "at split 512 and 1024, 4 at 128, one at 32 (where a lane owns one); below 32, an "
          "output has as many lanes as the split",
          "[jit][axis]") {
  // final_pass (axis.cuh) once combined each partial as it arrived, one dependent round trip
  // per partial (Nsight Compute, H200: 9 us for 64 outputs x 512 partials, 86 % of the stalls
  // long_scoreboard). finish_batch<S> is the batch; the loads are counted up to the first
  // floating add (the combine; address arithmetic adds integers), in each entry's PTX.
  const std::string ptx = ptx_of(R"(#include "axis/axis.cuh"
#define RT_FINISH(name, T, S)                                                                  \
  extern "C" __global__ void name(T *out, unsigned long long outer, unsigned long long r,      \
                                  const rt::acc_t<T> *__restrict__ partials) {                 \
    rt::axis::finish_outputs<T, rt::op_sum, S>(                                                \
        out, partials, 0, outer, static_cast<unsigned>(rt::axis::split_row(r, S).parts),      \
        blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, gridDim.x * (blockDim.x / 32));    \
  }
RT_FINISH(f32_split_4, float, 4)
RT_FINISH(f32_split_32, float, 32)
RT_FINISH(f32_split_128, float, 128)
RT_FINISH(f32_split_512, float, 512)
RT_FINISH(bf16_split_512, __nv_bfloat16, 512)
RT_FINISH(f64_split_1024, double, 1024)
)");
  const auto loads_before_combine = [&](const std::string &name, const std::string &add) {
    const std::string entry = entry_of(ptx, name);
    const std::size_t first_add = entry.find(add);
    REQUIRE(first_add != std::string::npos);
    INFO(entry);
    return count_of(entry.substr(0, first_add), "ld.global");
  };
  CHECK(loads_before_combine("f32_split_32", "add.f32") == 1);
  CHECK(loads_before_combine("f32_split_128", "add.f32") == 4);
  CHECK(loads_before_combine("f32_split_512", "add.f32") == 16);
  CHECK(loads_before_combine("bf16_split_512", "add.f32") == 16); // partials are float32
  CHECK(loads_before_combine("f64_split_1024", "add.f64") == 16);
  // a batch's lanes past the last partial keep their accumulator (selp), never add an identity
  CHECK(count_of(entry_of(ptx, "f32_split_512"), "selp.f32") >= 15);
  // A split of 4 gives an output 4 lanes (finish_lanes), 8 outputs a warp: a tree of 2
  // shuffles, where 32 lanes take 5 (axis_launch.cpp sizes the grid by the same rule).
  CHECK(loads_before_combine("f32_split_4", "add.f32") == 1);
  CHECK(count_of(entry_of(ptx, "f32_split_4"), "shfl.sync.down") == 2);
  CHECK(count_of(entry_of(ptx, "f32_split_32"), "shfl.sync.down") == 5);
}

TEST_CASE("tile_ticket's pass takes a ticket per tile and finishes there with the finish's code "
          "(the batch of partial loads, from L2); the tile strategy's pass has none of it",
          "[jit][axis]") {
  // The same column tile (256 threads, 32 lanes of 2, 4 loads in flight, split 64) as the tile
  // strategy's pass and as tile_ticket's: the ticket adds one atomic add per tile, the fences
  // around it, the block's vote (__syncthreads_or, no shared memory) and final_pass's per-output
  // code, whose loads bypass L1 (ld.global.cg: other blocks of the launch wrote them).
  const std::string ptx = ptx_of(R"(#include "axis/axis.cuh"
#define RT_TILE(name, T, Ticket)                                                                \
  extern "C" __global__ void name(const T *in, T *out, unsigned long long outer,               \
                                  unsigned long long r, unsigned long long inner,              \
                                  rt::acc_t<T> *partials) {                                    \
    rt::axis::column_tiles<T, rt::op_sum, 256, 32, 4, 2, 64, Ticket>(in, out, outer, r, inner, \
                                                                     partials);                \
  }
RT_TILE(f32_tile, float, false)
RT_TILE(f32_ticket, float, true)
RT_TILE(f64_ticket, double, true)
)");
  const std::string tile = entry_of(ptx, "f32_tile");
  for (const char *name : {"f32_ticket", "f64_ticket"}) {
    const std::string ticket = entry_of(ptx, name);
    INFO(name);
    CHECK(count_of(ticket, "atom.global.add.u32") == 1);
    CHECK(count_of(ticket, "membar.gl") + count_of(ticket, "fence.sc.gpu") >= 2);
    CHECK(count_of(ticket, "bar.red.or.pred") == 1);
    // finish_batch<64>: 2 partials a lane, both loaded before either is combined
    CHECK(count_of(ticket, "ld.global.cg") == 2);
    CHECK(count_of(ticket, ".local") == 0);
  }
  CHECK(count_of(tile, "atom.global") == 0);
  CHECK(count_of(tile, "membar.gl") + count_of(tile, "fence.sc.gpu") == 0);
  CHECK(count_of(tile, "bar.red") == 0);
  CHECK(count_of(tile, "ld.global.cg") == 0);
}

TEST_CASE("tile_ticket points compile with no local memory at every split from 2 to 1024, "
          "for float32, bfloat16 and float64 sums, minima and maxima, wide tiles included",
          "[jit][axis][slow]") {
  const family f = axis_family();
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
  for (const dtype t : {dtype::float32, dtype::bfloat16, dtype::float64})
    for (const reduce_op o : {reduce_op::sum, reduce_op::min, reduce_op::max}) {
      const search_space s(f, t, o, sm90);
      const auto vec = static_cast<std::int64_t>(16 / size_of(t)); // 16-byte loads
      // (block, lanes, split): the presets' 32-lane tiles, and the benchmark's fitted wide ones
      for (const auto &[bs, lanes, split] :
           std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
               {256, 32, 2}, {256, 8, 16}, {512, 128, 32}, {256, 256, 256}, {512, 64, 1024}}) {
        const point p = s.point_of({{"strategy", std::string("tile_ticket")},
                                    {"block_size", bs},
                                    {"lanes", lanes},
                                    {"vec", vec},
                                    {"unroll", std::int64_t{4}},
                                    {"split", split}});
        INFO(to_label(f, p.compile) << " " << to_string(t) << "." << to_string(o));
        REQUIRE(s.check(p).reasons() == "");
        requests.push_back(request_for(f, p.compile, 90));
        labels.push_back(to_label(f, p.compile) + " " + to_string(t) + "." + to_string(o));
      }
    }
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    INFO(labels[i]);
    REQUIRE(outcomes[i].program);
    for (const auto &[name, frame] : frames_of(*outcomes[i].program, requests[i])) {
      INFO(name);
      CHECK(frame == 0);
    }
  }
}

TEST_CASE("tile_ticket refuses split 1 with its reason, and shares tile's grid and shared memory",
          "[jit][axis]") {
  const family f = axis_family();
  const search_space s(f, dtype::float32, reduce_op::sum, sm90);
  const auto at = [&](const std::string &strategy, std::int64_t split) {
    return s.point_of({{"strategy", strategy},
                       {"block_size", std::int64_t{256}},
                       {"lanes", std::int64_t{32}},
                       {"vec", std::int64_t{4}},
                       {"split", split}});
  };
  CHECK(s.check(at("tile_ticket", 1)).reasons().find("the tile strategy") != std::string::npos);
  CHECK(s.check(at("tile", 1)).ok());
  for (const std::int64_t split : {2, 64, 1024}) {
    const point ticket = at("tile_ticket", split), tile = at("tile", split);
    REQUIRE(s.check(ticket).ok());
    CHECK(let_of(s, ticket, "batch_invariant") == 1);
    CHECK(let_of(s, ticket, "ticket_columns") == 32 * 4); // a tile's columns, one counter each
    CHECK(let_of(s, ticket, s.decl().shared_bytes.text()) ==
          let_of(s, tile, s.decl().shared_bytes.text()));
    for (const auto &shape : {reduction_shape{1, 65536, 4096}, reduction_shape{3, 1001, 200}})
      CHECK(grid_at(s, ticket, shape) == grid_at(s, tile, shape));
  }
}
