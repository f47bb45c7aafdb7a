// Export: the generated C++ header compiles with the project's compiler and, in a real
// program, picks the same variants as the Catalog; the JSON carries the same rules.
#include "catch.hpp"

#include <cstdlib>
#include <sstream>

#include "export_test_support.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/templates/template_library.hpp"

#ifndef RT_CXX_COMPILER
#define RT_CXX_COMPILER "c++" // db/CMakeLists.txt passes the configured compiler
#endif

using namespace reducetune::db;
using reducetune::template_library;

namespace {

const template_library &lib() {
  return rt_test::embedded_library();
}

const std::string h100_name = "NVIDIA H100 80GB HBM3";
const std::string odd_name = "Odd \"GPU\" \\ ?\?= \xce\xbc name";
const std::vector<unsigned long long> probe_n = {1,    1000, 1024,  1448,  1449,    2047,
                                                 2048, 4096, 65535, 65536, 1048576, 3000000000ull};

// H100: block 128 best at 1024, 256 at 4096, 512 at 1 Mi. The odd device (cc 8.0): 64 everywhere.
catalog make_catalog(const std::filesystem::path &path) {
  auto s = store::open(path);
  const auto d1 = s.register_device(rt_test::h100());
  const auto d2 = s.register_device(rt_test::gpu("GPU-odd", odd_name, 8));
  rt_test::record_three_sizes(s, d1, 1024);
  s.record_measurement(rt_test::measurement(d1, 1 << 20, 1024, 1e-7, "int32", "max"));
  s.record_measurement(rt_test::measurement(d2, 2048, 64, 1e-6));
  return catalog::load(s.connection());
}

using rt_test::run_ok;

std::string shell_quote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

} // namespace

TEST_CASE("the exported header compiles and picks the Catalog's variant for each n",
          "[db][export]") {
  rt_test::temp_dir dir;
  const auto c = make_catalog(dir / "results.sqlite");
  write_file_atomically(dir / "dispatch.hpp", export_header(c, lib(), "tuned"));

  std::ostringstream main_cpp;
  main_cpp
      << "#include \"dispatch.hpp\"\n#include <cstdio>\n"
      << "static_assert(tuned::select(\"" << h100_name
      << "\", 90, \"float32\", \"sum\", 1024)->bucket_n == 1024, \"constexpr lookup\");\n"
      << "static_assert(tuned::select(\"x\", 90, \"float32\", \"sum\", 1024)->bucket_n == 1024,"
         " \"by compute capability\");\n"
      << "static void show(const char *dev, int cc, const char *dtype, const char *op,"
         " unsigned long long n) {\n"
      << "  const tuned::choice *c = tuned::select(dev, cc, dtype, op, n);\n"
      << "  std::printf(\"%llu %s %s %s\\n\", n, c ? c->variant : \"none\","
         " c ? c->launch : \"-\", c && c->compile_parameter_count ? c->compile_parameters[0].value : \"-\");\n}\n"
      << "int main() {\n  const unsigned long long ns[] = {";
  for (auto n : probe_n)
    main_cpp << n << "ull, ";
  main_cpp << "};\n"
           << "  for (unsigned long long n : ns) show(\"" << h100_name
           << "\", 90, \"float32\", \"sum\", n);\n"
           << "  for (unsigned long long n : ns) show(\"another sm_80 board\", 80, \"float32\","
              " \"sum\", n);\n"
           << "  show(\"" << h100_name << "\", 90, \"int32\", \"max\", 5);\n"
           << "  show(\"" << h100_name << "\", 90, \"float64\", \"sum\", 5);\n"
           << "  show(\"unknown\", 75, \"float32\", \"sum\", 5);\n}\n";
  rt_test::write_bytes(dir / "main.cpp", main_cpp.str());

  const auto exe = dir / "dispatch_check";
  run_ok(std::string(RT_CXX_COMPILER) + " -std=c++17 -Wall -Wextra -Werror -o " +
         shell_quote(exe.string()) + " " + shell_quote((dir / "main.cpp").string()) + " 2>&1");
  const auto output = run_ok(shell_quote(exe.string()));

  std::ostringstream expected;
  const auto line = [&](const std::string &device, const char *dtype, const char *op,
                        unsigned long long n) {
    const auto b = c.best(device, dtype, op, n);
    expected << n << " " << (b ? b->variant.label : "none") << " " << (b ? b->launch_label : "-")
             << " "
             << (b ? std::to_string(
                         std::stoi(b->variant.label.substr(b->variant.label.rfind('_') + 1)))
                   : "-")
             << "\n";
  };
  for (auto n : probe_n)
    line(h100_name, "float32", "sum", n);
  for (auto n : probe_n)
    line(odd_name, "float32", "sum", n); // compute capability 80 falls back to the odd device
  line(h100_name, "int32", "max", 5);
  line(h100_name, "float64", "sum", 5);
  line("unknown", "float32", "sum", 5);
  CHECK(output == expected.str());

  // And the sizes themselves, independently of the Catalog.
  CHECK(output.find("1448 tunable.float32.sum.bs_128 ") != std::string::npos);
  CHECK(output.find("2048 tunable.float32.sum.bs_256 ") != std::string::npos);
  CHECK(output.find("65535 tunable.float32.sum.bs_256 ") != std::string::npos);
  CHECK(output.find("65536 tunable.float32.sum.bs_512 ") != std::string::npos);
  CHECK(output.find("5 none - -") != std::string::npos);
}

TEST_CASE("the JSON export carries the same rules with ascending thresholds", "[db][export]") {
  rt_test::temp_dir dir;
  const auto c = make_catalog(dir / "results.sqlite");
  const auto j = export_json(c, lib());
  REQUIRE(j["devices"].size() == 2);
  const auto &h100 = j["devices"][0];
  CHECK(h100["name"] == h100_name);
  CHECK(h100["compute_capability"] == 90);
  const auto &rules = h100["tables"][0]["rules"];
  REQUIRE(rules.size() == 3);
  CHECK(rules[0]["min_n"] == 0);
  CHECK(rules[1]["min_n"] == 2048);
  CHECK(rules[2]["min_n"] == 65536);
  CHECK(rules[2]["variant"] == "tunable.float32.sum.bs_512");
  CHECK(rules[2]["compile_parameters"]["block_size"] == 512);
  // A synthetic label no family declares: exported, but not launchable, and it says why.
  CHECK(rules[2]["launchable"] == false);
  CHECK(rules[2]["why"].get<std::string>().find("bs_512") != std::string::npos);
  CHECK(j["devices"][1]["name"] == odd_name);
  // Round trip through text.
  CHECK(nlohmann::ordered_json::parse(j.dump()) == j);
}

TEST_CASE("an export namespace that is not a C++ name is refused", "[db][export]") {
  rt_test::temp_dir dir;
  const auto c = make_catalog(dir / "results.sqlite");
  CHECK_THROWS_AS(export_header(c, lib(), "x; int y"), reducetune::invalid_configuration);
  CHECK_NOTHROW(export_header(c, lib(), "a::b_2"));
}
