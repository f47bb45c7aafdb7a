// The reducer's size dispatch (no GPU): read from a results database or from its exported
// JSON, it answers every n with the Catalog's point; a nondeterministic or flagged rule is
// kept out unless the selection admits it; the device is found by UUID, then name, then
// compute capability; a foreign document and a missing GPU get their clear errors.
#include "catch.hpp"

#include "../db/db_test_support.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/runtime/dispatch_table.hpp"
#include "reducetune/runtime/reducer.hpp"
#include "reducetune/templates/template_library.hpp"

#include <nlohmann/json.hpp>

using namespace reducetune;

namespace {

const std::vector<std::uint64_t> probe_n = {1,     1000,  1024,    1448,    1449,      2047,
                                            2048,  4096,  65535,   65536,   1u << 20,  3000000000ull};

// H100 float32 sum: block 128 best at 1024, 256 at 4096, 512 at 2^20; a nondeterministic
// (atomic) point is fastest at 2^16 and a flagged one at 2^18.
db::catalog make_catalog(const std::filesystem::path &path, point_selection only = {}) {
  auto s = db::store::open(path);
  const auto d = s.register_device(rt_test::h100());
  s.record_measurement(rt_test::measurement(d, 1024, 128, 1e-6));
  s.record_measurement(rt_test::measurement(d, 1024, 256, 2e-6));
  s.record_measurement(rt_test::measurement(d, 4096, 256, 2e-6));
  s.record_measurement(rt_test::measurement(d, 1 << 20, 512, 1e-4));
  auto atomic = rt_test::measurement(d, 1 << 16, 64, 1e-7);
  atomic.variant.label += ".fin_atomic";
  atomic.variant.determinism = "none";
  s.record_measurement(atomic);
  s.record_measurement(rt_test::measurement(d, 1 << 16, 1024, 5e-6));
  auto racy = rt_test::measurement(d, 1 << 18, 32, 1e-7);
  racy.variant.label += ".w_volatile_unsafe";
  racy.variant.flags_json = R"([{"parameter":"warp","value":"volatile_unsafe","why":"racy"}])";
  s.record_measurement(racy);
  s.record_measurement(rt_test::measurement(d, 1 << 18, 1024, 5e-6));
  return db::catalog::load(s.connection(), only);
}

nlohmann::json exported(const db::catalog &c) {
  return nlohmann::json::parse(
      db::export_json(c, template_library::embedded()).dump()); // as a file would hold it
}

} // namespace

TEST_CASE("the table from the database and from its export answer every n as the Catalog does",
          "[runtime][dispatch]") {
  rt_test::temp_dir dir;
  const auto c = make_catalog(dir / "r.db");
  const auto from_db = dispatch_table::from_catalog(c, dtype::float32, reduce_op::sum);
  const auto from_json =
      dispatch_table::from_json(exported(c), dtype::float32, reduce_op::sum, point_selection{});
  const auto *a = from_db.device_for("GPU-test-0001", "", 0);
  const auto *b = from_json.device_for("GPU-test-0001", "", 0);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  for (const auto n : probe_n) {
    const auto *want = c.find("GPU-test-0001", "float32", "sum", n);
    REQUIRE(want != nullptr);
    INFO("n = " << n);
    CHECK(dispatch_table::rule_for(*a, n)->variant == want->variant.label);
    CHECK(dispatch_table::rule_for(*b, n)->variant == want->variant.label);
    CHECK(dispatch_table::rule_for(*b, n)->launch == want->launch_label);
    CHECK(dispatch_table::rule_for(*b, n)->family == "tunable");
  }
  // deterministic by default: the atomic and the racy points are not the answer
  CHECK(dispatch_table::rule_for(*a, 1 << 16)->variant == "tunable.float32.sum.bs_1024");
  CHECK(dispatch_table::rule_for(*a, 1 << 18)->variant == "tunable.float32.sum.bs_1024");
}

TEST_CASE("an export that admitted every point is filtered by the reducer's own selection",
          "[runtime][dispatch]") {
  rt_test::temp_dir dir;
  const auto all = make_catalog(dir / "r.db", point_selection{true, false});
  const auto doc = exported(all);
  const auto strict = dispatch_table::from_json(doc, dtype::float32, reduce_op::sum, {});
  const auto any = dispatch_table::from_json(doc, dtype::float32, reduce_op::sum, {true, false});
  const auto *s = strict.device_for("", "NVIDIA H100 80GB HBM3", 0);
  const auto *x = any.device_for("", "NVIDIA H100 80GB HBM3", 0);
  REQUIRE(s != nullptr);
  REQUIRE(x != nullptr);
  CHECK(dispatch_table::rule_for(*x, 1 << 16)->variant == "tunable.float32.sum.bs_64.fin_atomic");
  CHECK(dispatch_table::rule_for(*x, 1 << 18)->determinism == "run_to_run");
  CHECK(dispatch_table::rule_for(*x, 1 << 18)->flagged);
  // the strict reducer answers 2^16 and 2^18 from its neighbours, never with those points
  for (const std::uint64_t n : {1u << 16, 1u << 18}) {
    const auto *r = dispatch_table::rule_for(*s, n);
    CHECK(r->determinism == "run_to_run");
    CHECK_FALSE(r->flagged);
  }
  CHECK(s->rules.size() == 3); // 1024, 4096 and 2^20 (the strict ones at 2^16/2^18 were slower)
}

TEST_CASE("a device is found by UUID, then by name, then by compute capability",
          "[runtime][dispatch]") {
  rt_test::temp_dir dir;
  const auto t = dispatch_table::from_catalog(make_catalog(dir / "r.db"), dtype::float32,
                                              reduce_op::sum);
  CHECK(t.device_for("GPU-test-0001", "other", 80) != nullptr);
  CHECK(t.device_for("GPU-other", "NVIDIA H100 80GB HBM3", 80) != nullptr);
  CHECK(t.device_for("GPU-other", "NVIDIA H200", 90) != nullptr); // same compute capability
  CHECK(t.device_for("GPU-other", "NVIDIA A100", 80) == nullptr);
  // no table for another type or operator
  const auto none = dispatch_table::from_catalog(make_catalog(dir / "r2.db"), dtype::int64,
                                                 reduce_op::min);
  CHECK(none.devices().empty());
  // reducer::for_point's one rule answers every device, whatever its UUID, name or arch
  dispatch_device one;
  one.any_device = true;
  one.rules.push_back({1, "tunable", "v", "l", "unknown", false});
  const dispatch_table any({t.devices()[0], one});
  const auto *d = any.device_for("GPU-test-0001", "NVIDIA H100 80GB HBM3", 90);
  REQUIRE(d != nullptr);
  CHECK(d->any_device);
  CHECK(dispatch_table::rule_for(*d, 1u << 30)->variant == "v");
}

TEST_CASE("a document that is not a dispatch table is refused with what to do",
          "[runtime][dispatch][errors]") {
  const auto type = dtype::float32;
  const auto op = reduce_op::sum;
  CHECK_THROWS_WITH(dispatch_table::from_json(nlohmann::json::parse(R"({"a": 1})"), type, op, {}),
                    rt_test::has_text("reducetune export json"));
  auto doc = nlohmann::json::parse(
      R"({"format": "reducetune-dispatch", "devices": [{"name": "x", "compute_capability": 90,
          "tables": [{"dtype": "float32", "op": "sum", "rules": [{"bucket_n": 4}]}]}]})");
  CHECK_THROWS_WITH(dispatch_table::from_json(doc, type, op, {}), rt_test::has_text("malformed"));
  rt_test::temp_dir dir;
  rt_test::write_bytes(dir / "t.json", "not json");
  CHECK_THROWS_WITH(dispatch_table::from_json_file(dir / "t.json", type, op, {}),
                    rt_test::has_text("is not JSON"));
  CHECK_THROWS_AS(dispatch_table::from_json_file(dir / "missing.json", type, op, {}),
                  invalid_configuration);
}

TEST_CASE("the reducer refuses n = 0 before touching a device, and says when there is none",
          "[runtime][errors]") {
  rt_test::temp_dir dir;
  reducer_options o;
  o.cache_dir = dir.path();
  auto r = reducer::untuned(dtype::float32, reduce_op::sum, o);
  float out = 0;
  CHECK_THROWS_WITH(r.reduce_to_host(nullptr, 0, &out), rt_test::has_text("n >= 1"));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    CHECK_THROWS_AS(r.reduce(reinterpret_cast<const void *>(256), 1024, nullptr), device_error);
  }
}
