// One device-matching rule (catalog.hpp, device_match_order): the Catalog and the exported
// header's select(), compiled into a real program, pick the same table for every combination of
// UUID, name and compute capability over a set of devices (twins of one model, two models of
// one name, a sibling architecture, unknown ones), and a few answers are checked on their own.
#include "catch.hpp"

#include <sstream>
#include <string>
#include <vector>

#include "export_test_support.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/templates/template_library.hpp"

#ifndef RT_CXX_COMPILER
#define RT_CXX_COMPILER "c++"
#endif

using namespace reducetune::db;

namespace {

const std::string h100 = "NVIDIA H100 80GB HBM3";

// Each model's winners have their own block size, so that a label names the model it came from:
// a (twins GPU-a, GPU-a2): 128; b (same name as a, fewer SMs): 256; c (H200, also cc 9.0): 512;
// d (A100, cc 8.0): 64.
catalog make_catalog(const std::filesystem::path &path) {
  auto s = store::open(path);
  auto dev = [&](const std::string &uuid, const std::string &name, int major, int sms) {
    auto d = rt_test::gpu(uuid, name, major);
    d.sm_count = sms;
    return s.register_device(d);
  };
  const auto a = dev("GPU-a", h100, 9, 132);
  (void)dev("GPU-a2", h100, 9, 132);
  const auto b = dev("GPU-b", h100, 9, 114);
  const auto c = dev("GPU-c", "NVIDIA H200", 9, 132);
  const auto d = dev("GPU-d", "NVIDIA A100", 8, 108);
  s.record_measurement(rt_test::measurement(a, 1024, 128, 1e-6));
  s.record_measurement(rt_test::measurement(a, 1024, 128, 1e-6, "int32", "max"));
  s.record_measurement(rt_test::measurement(b, 1024, 256, 1e-6));
  s.record_measurement(rt_test::measurement(b, 1024, 256, 1e-6, "float64", "sum"));
  s.record_measurement(rt_test::measurement(c, 1024, 512, 1e-6));
  s.record_measurement(rt_test::measurement(c, 1024, 512, 1e-6, "int64", "sum"));
  s.record_measurement(rt_test::measurement(d, 1024, 64, 1e-6));
  return catalog::load(s.connection());
}

struct query {
  std::string uuid, name;
  int cc;
  std::string dtype, op;
};

std::vector<query> queries() {
  std::vector<query> out;
  for (const std::string uuid : {"", "GPU-a", "GPU-a2", "GPU-b", "GPU-c", "GPU-d", "GPU-x"})
    for (const std::string name : {std::string(), h100, std::string("NVIDIA H200"),
                                   std::string("NVIDIA A100"), std::string("unknown")})
      for (const int cc : {0, 75, 80, 90})
        for (const auto &[dtype, op] :
             std::vector<std::pair<std::string, std::string>>{{"float32", "sum"},
                                                              {"float64", "sum"},
                                                              {"int32", "max"},
                                                              {"int64", "sum"},
                                                              {"float16", "sum"}})
          out.push_back({uuid, name, cc, dtype, op});
  return out;
}

using rt_test::run_ok;

std::string catalog_answer(const catalog &c, const query &q) {
  const auto *e = c.find(device_query{q.uuid, q.name, q.cc}, q.dtype, q.op, 1000);
  return e ? e->variant.label : "none";
}

} // namespace

TEST_CASE("the Catalog and the exported select() match devices by one rule", "[db][export]") {
  rt_test::temp_dir dir;
  const auto c = make_catalog(dir / "results.sqlite");
  write_file_atomically(dir / "dispatch.hpp",
                        export_header(c, reducetune::template_library::embedded(), "tuned"));

  std::ostringstream program, expected;
  program << "#include \"dispatch.hpp\"\n#include <cstdio>\n"
          << "static void show(const char *u, const char *name, int cc, const char *t,"
             " const char *op) {\n"
          << "  const tuned::choice *c = tuned::select(u, name, cc, t, op, 1000);\n"
          << "  std::printf(\"%s\\n\", c ? c->variant : \"none\");\n}\nint main() {\n";
  for (const auto &q : queries()) {
    program << "  show(\"" << q.uuid << "\", \"" << q.name << "\", " << q.cc << ", \"" << q.dtype
            << "\", \"" << q.op << "\");\n";
    expected << catalog_answer(c, q) << "\n";
  }
  // Without a UUID, and with null pointers: the old form still answers by name, then capability.
  program << "  std::printf(\"%s\\n\", tuned::select(\"" << h100
          << "\", 90, \"float64\", \"sum\", 1000)->variant);\n"
          << "  std::printf(\"%s\\n\", tuned::select(nullptr, nullptr, 80, \"float32\", \"sum\","
             " 1000)->variant);\n}\n";
  expected << catalog_answer(c, {"", h100, 90, "float64", "sum"}) << "\n"
           << catalog_answer(c, {"", "", 80, "float32", "sum"}) << "\n";
  rt_test::write_bytes(dir / "main.cpp", program.str());
  const auto exe = (dir / "select_check").string();
  run_ok(std::string(RT_CXX_COMPILER) + " -std=c++17 -Wall -Wextra -Werror -o '" + exe + "' '" +
         (dir / "main.cpp").string() + "' 2>&1");
  CHECK(run_ok("'" + exe + "'") == expected.str());
}

TEST_CASE("the rule's order: UUID, then name, then compute capability; a model without the "
          "type and operator lets the next one answer",
          "[db]") {
  rt_test::temp_dir dir;
  const auto c = make_catalog(dir / "results.sqlite");
  auto block_of = [&](const query &q) {
    const std::string label = catalog_answer(c, q);
    return label == "none" ? std::string("none") : label.substr(label.rfind('_') + 1);
  };
  CHECK(block_of({"GPU-a2", "NVIDIA A100", 80, "float32", "sum"}) == "128"); // a twin's UUID
  CHECK(block_of({"GPU-c", h100, 80, "float32", "sum"}) == "512");           // UUID before name
  CHECK(block_of({"GPU-x", "NVIDIA A100", 90, "float32", "sum"}) == "64");   // name before cc
  CHECK(block_of({"GPU-x", "unknown", 80, "float32", "sum"}) == "64");       // cc alone
  CHECK(block_of({"", h100, 0, "float64", "sum"}) == "256");   // a lacks it: b, of the same name
  CHECK(block_of({"GPU-a", "", 90, "int64", "sum"}) == "512"); // a lacks it: cc 9.0's c
  CHECK(block_of({"GPU-a", "", 0, "float16", "sum"}) == "none");
  CHECK(block_of({"", "", 75, "float32", "sum"}) == "none");
  CHECK(c.device_of("GPU-a2") == c.device_of(h100)); // twins are one model, first of the name
}
