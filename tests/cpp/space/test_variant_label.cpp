#include "catch.hpp"

#include "toy_family.hpp"

#include "reducetune/space/space.hpp"

#include <unordered_set>

using namespace reducetune;
using rt_test::config_error_of;
using rt_test::contains;
using rt_test::load_toy;

TEST_CASE("element types and operators print and parse by name", "[space]") {
  for (dtype t : all_dtypes)
    CHECK(dtype_from_string(to_string(t)) == t);
  for (reduce_op o : all_ops)
    CHECK(op_from_string(to_string(o)) == o);
  CHECK(size_of(dtype::int64) == sizeof(long long));
  CHECK(size_of(dtype::float32) == sizeof(float));
  CHECK(std::string(cpp_type(dtype::int64)) == "long long");
  CHECK(std::string(cpp_op(reduce_op::prod)) == "rt::op_prod");
}

TEST_CASE("an unknown element type or operator lists the valid names", "[space]") {
  const auto t = config_error_of([] { (void)dtype_from_string("float8"); });
  CHECK(contains(t, "'float8'"));
  CHECK(contains(t, "int32, int64, float32, float64, float16, bfloat16"));
  const auto o = config_error_of([] { (void)op_from_string("mean"); });
  CHECK(contains(o, "'mean'"));
  CHECK(contains(o, "sum, min, max, prod"));
}

TEST_CASE("a variant's label names family, type, operator and each prefixed value", "[space]") {
  const family f = load_toy();
  const variant v{
      "toy",
      dtype::float32,
      reduce_op::sum,
      {std::int64_t{256}, std::string("shuffle"), std::int64_t{4}, std::string("two_pass")}};
  CHECK(to_label(f, v) == "toy.float32.sum.bs_256.warp_shuffle.v_4.fin_two_pass");
  CHECK(to_label(f, launch_config{{std::int64_t{16}, std::int64_t{0}}}) == "ept_16.cap_0");
  CHECK(to_label(f, default_variant(f, dtype::int32, reduce_op::max)) ==
        "toy.int32.max.bs_256.warp_shuffle.v_1.fin_two_pass");
  CHECK(to_label(f, default_launch_config(f)) == "ept_4.cap_0");
}

TEST_CASE("every label of the space parses back to its variant", "[space]") {
  const family f = load_toy();
  for (dtype t : all_dtypes)
    for (reduce_op o : all_ops) {
      const search_space s(f, t, o, device_limits::for_arch("sm_90"));
      for (const auto &v : s.all_points())
        CHECK(parse_variant_label(f, to_label(f, v)) == v);
      for (const auto &c : s.launch_configs())
        CHECK(parse_launch_label(f, to_label(f, c)) == c);
    }
}

TEST_CASE("a label that does not fit the family says which part", "[space]") {
  const family f = load_toy();
  CHECK(contains(config_error_of([&] {
                   (void)parse_variant_label(
                       f, "other.float32.sum.bs_256.warp_shuffle.v_4.fin_atomic");
                 }),
                 "does not start with 'toy."));
  CHECK(contains(config_error_of([&] {
                   (void)parse_variant_label(f, "toy.half.sum.bs_256.warp_shuffle.v_4.fin_atomic");
                 }),
                 "'half'"));
  CHECK(contains(config_error_of([&] {
                   (void)parse_variant_label(f, "toy.float32.sum.bs_256.warp_shuffle.v_4");
                 }),
                 "expected 4"));
  CHECK(contains(config_error_of([&] {
                   (void)parse_variant_label(f,
                                             "toy.float32.sum.bs_96.warp_shuffle.v_4.fin_atomic");
                 }),
                 "'96' is not a value of 'block_size'"));
  CHECK(contains(config_error_of([&] {
                   (void)parse_variant_label(f,
                                             "toy.float32.sum.b_256.warp_shuffle.v_4.fin_atomic");
                 }),
                 "should start with 'bs_'"));
  CHECK(contains(config_error_of([&] { (void)parse_launch_label(f, "ept_16"); }), "expected 2"));
}

TEST_CASE("variants compare, order and hash by value", "[space]") {
  const family f = load_toy();
  const search_space s(f, dtype::float32, reduce_op::sum, device_limits::for_arch("sm_90"));
  const auto all = s.all_points();
  std::unordered_set<variant> hashed(all.begin(), all.end());
  CHECK(hashed.size() == all.size());
  CHECK(hashed.count(s.point(5)) == 1);
  CHECK(s.point(3) == s.point(3));
  CHECK(s.point(3) != s.point(4));
  CHECK((s.point(3) < s.point(4) || s.point(4) < s.point(3)));
  CHECK(std::hash<variant>{}(s.point(7)) == std::hash<variant>{}(s.point(7)));
  std::unordered_set<launch_config> configs;
  for (const auto &c : s.launch_configs())
    configs.insert(c);
  CHECK(configs.size() == s.launch_size());
}

TEST_CASE("value_of finds a parameter by name", "[space]") {
  const family f = load_toy();
  const auto v = default_variant(f, dtype::float32, reduce_op::sum);
  CHECK(value_of(f, v, "warp") == value{std::string("shuffle")});
  CHECK(value_of(f, default_launch_config(f), "elements_per_thread") == value{std::int64_t{4}});
  CHECK(contains(config_error_of([&] { (void)value_of(f, v, "cap"); }),
                 "no compile parameter 'cap'"));
}
