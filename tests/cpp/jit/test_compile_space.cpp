// Every preset and a seeded sample of the search space compile with NVRTC for the
// architectures we target, invalid points never reach the compiler, and the test-only
// families fail (or not) the way they say. No GPU needed. `reducetune-compile --all` compiles
// every point; this CI test compiles presets + 500 sampled points per architecture.
#include "catch.hpp"
#include "shared_compiler.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/space_jobs.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"

#include <cstdint>
#include <cstring>
#include <set>
#include <string_view>

using namespace reducetune;

namespace {

// The embedded library with the test-only families of tests/data/templates laid over it.
template_library with_test_families() {
  return template_library::embedded_with(RT_TEST_DATA_DIR "/templates");
}

compile_request preset_request(const template_library &lib, const std::string &family_name,
                               int arch) {
  const family f = family::load(lib, family_name);
  const search_space space(f, dtype::int32, reduce_op::sum, device_limits::for_arch("sm_90"));
  if (!space.presets().empty())
    return request_for(f, space.presets().front().point, arch);
  return request_for(f, default_variant(f, dtype::int32, reduce_op::sum), arch);
}

// The log of the compile_error that compiling the family's first preset throws.
std::string failed_compile_log(const template_library &lib, const std::string &family_name) {
  compiler c(lib);
  try {
    (void)c.compile(preset_request(lib, family_name, 90));
  } catch (const compile_error &e) {
    return e.log();
  }
  FAIL("the family " << family_name << " compiled");
  return {};
}

} // namespace

TEST_CASE("Every preset and 500 sampled points compile for sm_80 and sm_90", "[jit][space][slow]") {
  const template_library lib = template_library::embedded();
  for (const std::string arch : {"sm_80", "sm_90"}) {
    DYNAMIC_SECTION("architecture " << arch) {
      job_selection selection;
      selection.sample = 500;
      const auto jobs = select_jobs(lib, device_limits::for_arch(arch), selection);

      // What the selection must contain, counted independently of select_jobs.
      std::size_t presets = 0;
      std::set<std::string> families;
      for (const auto &f : family::load_all(lib)) {
        families.insert(f.name);
        for (const dtype t : all_dtypes)
          for (const reduce_op o : all_ops) {
            const search_space space(f, t, o, device_limits::for_arch(arch));
            for (const auto &p : space.presets())
              presets += space.check(p.point) ? 1 : 0;
          }
      }
      REQUIRE(families.count("seeds") == 1);
      REQUIRE(families.count("tunable") == 1);
      REQUIRE(families.count("nested") == 1);
      REQUIRE(jobs.size() >= presets + 500 - 4 * 4 * 4); // presets may also be sampled points

      const auto outcomes = rt_test::shared_compiler().compile_batch([&] {
        std::vector<compile_request> r;
        for (const auto &j : jobs)
          r.push_back(j.request);
        return r;
      }());
      std::size_t failed = 0;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (outcomes[i].program)
          continue;
        ++failed;
        UNSCOPED_INFO(jobs[i].label << ": " << outcomes[i].error.substr(0, 2000));
      }
      REQUIRE(failed == 0);
      for (const auto &o : outcomes)
        REQUIRE(o.program->cubin.compare(0, 4, "\x7f" "ELF") == 0);
    }
  }
}

TEST_CASE("An invalid point is rejected with its reason before any compile", "[jit][space]") {
  const template_library lib = template_library::embedded();
  const family f = family::load(lib, "tunable");
  const search_space space(f, dtype::int64, reduce_op::sum, device_limits::for_arch("sm_90"));
  variant v = default_variant(f, dtype::int64, reduce_op::sum);
  const auto vec = f.find_parameter("vec");
  REQUIRE(vec != nullptr);
  for (std::size_t i = 0; i < f.parameters.size(); ++i)
    if (f.parameters[i].name == "vec")
      v.values[i] = value{std::int64_t{4}}; // 4 x 8 bytes = 32-byte loads
  const check_result verdict = space.check(v);
  REQUIRE_FALSE(verdict.ok());
  REQUIRE(verdict.reasons().find("16 bytes") != std::string::npos);

  // The selection of points to compile never holds an invalid one.
  job_selection selection;
  selection.family = "tunable";
  selection.dtypes = {dtype::int64};
  selection.ops = {reduce_op::sum};
  selection.sample = 200;
  const auto jobs = select_jobs(lib, device_limits::for_arch("sm_90"), selection);
  REQUIRE(jobs.size() >= 200);
  for (const auto &j : jobs) {
    const variant point = parse_variant_label(f, j.label);
    REQUIRE(space.check(point).ok());
  }
}

TEST_CASE("A deliberately broken template fails with an error that carries its log",
          "[jit][errors]") {
  const std::string log = failed_compile_log(with_test_families(), "broken");
  REQUIRE(log.find("broken/broken.cuh") != std::string::npos);
  REQUIRE(log.find("error") != std::string::npos);
}

TEST_CASE("The seed's nested reduction with device-side cudaDeviceSynchronize does not "
          "compile on CUDA 13, and the log says why",
          "[jit][seeds]") {
  const std::string log = failed_compile_log(with_test_families(), "nested_faithful");
  INFO(log);
  REQUIRE(log.find("cudaDeviceSynchronize") != std::string::npos);
  REQUIRE(log.find("undefined") != std::string::npos);
}

TEST_CASE("The nested family compiles as relocatable code and links with the device runtime",
          "[jit][seeds]") {
  const template_library lib = template_library::embedded();
  const compile_request r = preset_request(lib, "nested", 90);
  REQUIRE(r.rdc);
  const auto program = rt_test::shared_compiler().compile(r);
  REQUIRE(program->cubin.compare(0, 4, "\x7f" "ELF") == 0);
  REQUIRE(std::find(program->options.begin(), program->options.end(), "-rdc=true") !=
          program->options.end());
}

namespace {

// The bytes of one section of a 64-bit little-endian ELF image (every cubin NVRTC writes), by
// name; empty when the image has no such section.
std::string_view elf_section(const std::string &elf, const std::string &name) {
  const auto read = [&elf](std::uint64_t at, auto value) {
    REQUIRE(at + sizeof(value) <= elf.size());
    std::memcpy(&value, elf.data() + at, sizeof(value));
    return value;
  };
  const auto shoff = read(0x28, std::uint64_t{});
  const auto entsize = read(0x3a, std::uint16_t{});
  const auto count = read(0x3c, std::uint16_t{});
  const auto header = [&](unsigned i) { return shoff + std::uint64_t{i} * entsize; };
  const auto names = read(header(read(0x3e, std::uint16_t{})) + 0x18, std::uint64_t{});
  for (unsigned i = 0; i < count; ++i) {
    const auto at = names + read(header(i), std::uint32_t{});
    if (at < elf.size() && name == elf.c_str() + at) {
      const auto offset = read(header(i) + 0x18, std::uint64_t{});
      const auto size = read(header(i) + 0x20, std::uint64_t{});
      REQUIRE(offset + size <= elf.size());
      return std::string_view(elf).substr(offset, size);
    }
  }
  return {};
}

} // namespace

TEST_CASE("The faulting test family compiles (it fails only when it runs)", "[jit]") {
  const template_library lib = with_test_families();
  REQUIRE(family::load(lib, "faulting").expected == "launch_error"); // what GPU tests expect
  compiler c(lib);
  const compile_request request = preset_request(lib, "faulting", 90);
  const auto program = c.compile(request);
  REQUIRE(request.name_expressions.size() == 1);
  const std::string &kernel = program->mangled(request.name_expressions.front());
  REQUIRE(kernel.find("faulting") != std::string::npos);

  // It faults only if the wild store reached the machine code: a compiler that dropped it
  // (or a template edited into a harmless body) would still compile. Hopper SASS is 16-byte
  // instructions whose low 12 bits are the opcode; 0x986 is STG (a global store), as a
  // plain `out[i] = x` kernel shows under ptxas of CUDA 12 and 13. The body stores once.
  const std::string_view code = elf_section(program->cubin, ".text." + kernel);
  REQUIRE(code.size() % 16 == 0);
  REQUIRE_FALSE(code.empty());
  std::size_t global_stores = 0;
  for (std::size_t at = 0; at < code.size(); at += 16) {
    std::uint64_t low = 0;
    std::memcpy(&low, code.data() + at, sizeof(low));
    global_stores += (low & 0xfff) == 0x986 ? 1 : 0;
  }
  REQUIRE(global_stores == 1);
}

// gpu_test_one_tile_bits compares the tunable family's two paths by compiling each point a
// second time with RT_TUNABLE_LOOP_ONLY; that comparison means something only while the option
// still reaches one_tile_fits and changes the code.
TEST_CASE("RT_TUNABLE_LOOP_ONLY compiles the tunable family without its one-tile path",
          "[jit][one_tile]") {
  const auto &lib = template_library::embedded();
  const family f = family::load(lib, "tunable");
  const variant v = default_variant(f, dtype::float32, reduce_op::sum);
  compile_request plain = request_for(f, v, 90), loop = plain;
  loop.extra_options.push_back("-DRT_TUNABLE_LOOP_ONLY=1");
  const auto a = rt_test::shared_compiler().compile(plain);
  const auto b = rt_test::shared_compiler().compile(loop);
  REQUIRE(a->cubin != b->cubin);
  REQUIRE(a->cubin.size() > b->cubin.size()); // the loop's code is in both, the straight path in one
}
