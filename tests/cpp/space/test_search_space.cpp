#include "catch.hpp"

#include "toy_family.hpp"

#include "reducetune/space/space.hpp"

#include <set>

using namespace reducetune;
using rt_test::config_error_of;
using rt_test::contains;
using rt_test::load_toy;

namespace {

variant toy_variant(dtype t, std::int64_t bs, const std::string &warp, std::int64_t vec,
                    const std::string &finish, reduce_op o = reduce_op::sum) {
  return variant{"toy", t, o, {bs, warp, vec, finish}};
}

bool has_why(const check_result &r, const std::string &why) {
  for (const auto &f : r.failures)
    if (contains(f.why, why))
      return true;
  return false;
}

// The toy family's compile-time rules, written out here independently of the declaration.
bool toy_valid(std::int64_t bs, const std::string &warp, std::int64_t vec, dtype t,
               const device_limits &d) {
  const auto size = static_cast<std::int64_t>(
      t == dtype::float16 || t == dtype::bfloat16 ? 2
      : t == dtype::int32 || t == dtype::float32  ? 4
                                                  : 8);
  const bool integer = t == dtype::int32 || t == dtype::int64;
  return bs <= d.max_threads_per_block && bs * size <= d.max_shared_per_block &&
         (warp != "redux" || integer) && vec * size <= 16;
}

} // namespace

TEST_CASE("a valid point passes every check", "[space]") {
  const search_space s(load_toy(), dtype::float32, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  const auto r = s.check(toy_variant(dtype::float32, 256, "shuffle", 4, "two_pass"));
  CHECK(r.ok());
  CHECK(r.reasons().empty());
}

TEST_CASE("a point that breaks constraints is rejected with each reason", "[space]") {
  const search_space s(load_toy(), dtype::float64, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  const auto r = s.check(toy_variant(dtype::float64, 256, "redux", 4, "two_pass"));
  CHECK_FALSE(r.ok());
  REQUIRE(r.failures.size() == 2);
  CHECK(has_why(r, "redux needs integers"));
  CHECK(has_why(r, "a vector load is at most 16 bytes"));
  CHECK(r.failures[0].expr == "warp != 'redux' || is_integer");
}

TEST_CASE("the built-in limits reject blocks too large for the device", "[space]") {
  device_limits small = device_limits::for_arch("sm_90");
  small.max_shared_per_block = 1024;
  const search_space s(load_toy(), dtype::int32, reduce_op::max, small);
  const auto too_many_threads =
      s.check(toy_variant(dtype::int32, 2048, "shuffle", 1, "ticket", reduce_op::max));
  CHECK(has_why(too_many_threads, "threads per block"));
  const auto too_much_shared =
      s.check(toy_variant(dtype::int32, 512, "shuffle", 1, "ticket", reduce_op::max));
  REQUIRE(too_much_shared.failures.size() == 1);
  CHECK(too_much_shared.failures[0].expr == "shared_bytes <= max_shared_per_block");
  CHECK(contains(too_much_shared.reasons(), "2048 bytes"));
}

TEST_CASE("constraints naming launch parameters are checked with the launch config", "[space]") {
  const search_space s(load_toy(), dtype::float32, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  const auto v = toy_variant(dtype::float32, 256, "shuffle", 4, "two_pass");
  CHECK(s.check(v).ok()); // elements_per_thread is not known yet
  const auto bad = s.check(v, launch_config{{std::int64_t{1}, std::int64_t{0}}});
  REQUIRE(bad.failures.size() == 1);
  CHECK(bad.failures[0].why == "whole vectors per thread");
  CHECK(s.check(v, launch_config{{std::int64_t{16}, std::int64_t{2}}}).ok());
  CHECK(s.valid_launch_configs(v).size() == 2 * 2); // ept 4 and 16, cap 0 and 2
}

TEST_CASE("a variant of another family or with an undeclared value is an error", "[space]") {
  const search_space s(load_toy(), dtype::float32, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  auto v = toy_variant(dtype::float32, 256, "shuffle", 4, "two_pass");
  v.family = "other";
  CHECK(contains(config_error_of([&] { (void)s.check(v); }), "family 'other'"));
  CHECK(contains(config_error_of([&] {
                   (void)s.check(toy_variant(dtype::float32, 96, "shuffle", 4, "two_pass"));
                 }),
                 "96 is not a value of 'block_size'"));
  CHECK(contains(config_error_of([&] {
                   (void)s.check(toy_variant(dtype::int32, 256, "shuffle", 4, "two_pass"));
                 }),
                 "int32.sum given to the search space of float32.sum"));
}

TEST_CASE("enumeration visits every point once, and the valid ones are those that pass",
          "[space]") {
  for (dtype t : all_dtypes) {
    for (const char *arch : {"sm_80", "sm_90"}) {
      device_limits d = device_limits::for_arch(arch);
      const search_space s(load_toy(), t, reduce_op::sum, d);
      std::uint64_t expected_valid = 0;
      std::set<variant> expected_points;
      for (std::int64_t bs : {32, 64, 128, 256, 512, 1024, 2048})
        for (const char *warp : {"shuffle", "redux", "volatile_unsafe"})
          for (std::int64_t vec : {1, 2, 4})
            for (const char *fin : {"two_pass", "atomic", "ticket"}) {
              expected_points.insert(toy_variant(t, bs, warp, vec, fin));
              expected_valid += toy_valid(bs, warp, vec, t, d) ? 1 : 0;
            }
      CHECK(s.size() == expected_points.size());
      const auto all = s.all_points();
      CHECK(std::set<variant>(all.begin(), all.end()) == expected_points);
      CHECK(s.valid_size() == expected_valid);
      for (const auto &v : s.valid_points())
        CHECK(toy_valid(std::get<std::int64_t>(v.values[0]), std::get<std::string>(v.values[1]),
                        std::get<std::int64_t>(v.values[2]), t, d));
      CHECK(s.launch_size() == 3 * 2);
      CHECK(s.launch_configs().size() == 3 * 2);
    }
  }
}

TEST_CASE("points are numbered with the last parameter varying fastest", "[space]") {
  const search_space s(load_toy(), dtype::float32, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  CHECK(s.point(0) == toy_variant(dtype::float32, 32, "shuffle", 1, "two_pass"));
  CHECK(s.point(1) == toy_variant(dtype::float32, 32, "shuffle", 1, "atomic"));
  CHECK(s.point(3) == toy_variant(dtype::float32, 32, "shuffle", 2, "two_pass"));
  CHECK(s.point(s.size() - 1) == toy_variant(dtype::float32, 2048, "volatile_unsafe", 4, "ticket"));
  CHECK(contains(config_error_of([&] { (void)s.point(s.size()); }), "outside"));
}

TEST_CASE("a seeded sample is deterministic, distinct and valid", "[space]") {
  const search_space s(load_toy(), dtype::int64, reduce_op::min, device_limits::for_arch("sm_90"));
  const auto a = s.sample(10, 1234);
  const auto b = s.sample(10, 1234);
  const auto c = s.sample(10, 4321);
  CHECK(a == b);
  CHECK(a != c);
  REQUIRE(a.size() == 10);
  CHECK(std::set<variant>(a.begin(), a.end()).size() == 10);
  for (const auto &v : a)
    CHECK(s.check(v).ok());
  CHECK(s.sample(5) == s.sample(5, search_space::default_seed));
}

TEST_CASE("a sample larger than the valid space is the whole valid space", "[space]") {
  const search_space s(load_toy(), dtype::int64, reduce_op::min, device_limits::for_arch("sm_90"));
  const auto all = s.sample(1000000, 7);
  const auto valid = s.valid_points();
  CHECK(all.size() == valid.size());
  CHECK(std::set<variant>(all.begin(), all.end()) == std::set<variant>(valid.begin(), valid.end()));
}

TEST_CASE("presets become points with defaults for what they do not name", "[space]") {
  const family f = load_toy();
  const search_space s(f, dtype::float32, reduce_op::sum, device_limits::for_arch("sm_90"));
  const auto presets = s.presets();
  REQUIRE(presets.size() == 1);
  CHECK(presets[0].name == "good");
  CHECK(presets[0].note == "a test preset");
  CHECK(presets[0].point == toy_variant(dtype::float32, 128, "shuffle", 1, "two_pass"));
  CHECK(presets[0].launch == launch_config{{std::int64_t{16}, std::int64_t{0}}});
  CHECK(s.check(presets[0].point, presets[0].launch).ok());
}

TEST_CASE("a let binding of the chosen value is an identifier of the point", "[space]") {
  const search_space s(load_toy(), dtype::float32, reduce_op::sum,
                       device_limits::for_arch("sm_90"));
  const auto with_atomic = s.scope_for(toy_variant(dtype::float32, 256, "shuffle", 4, "atomic"));
  CHECK(with_atomic.get("uses_atomics") == value{std::int64_t{1}});
  CHECK(with_atomic.get("sizeof_T") == value{std::int64_t{4}});
  CHECK(with_atomic.get("dtype") == value{std::string("float32")});
  const auto without = s.scope_for(toy_variant(dtype::float32, 256, "shuffle", 4, "ticket"));
  CHECK_FALSE(without.contains("uses_atomics"));
}
