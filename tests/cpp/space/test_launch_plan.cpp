#include "catch.hpp"

#include "toy_family.hpp"

#include "reducetune/space/space.hpp"

using namespace reducetune;
using rt_test::config_error_of;
using rt_test::contains;
using rt_test::load_toy;

namespace {
variant toy_variant(dtype t, reduce_op o, std::int64_t bs, const std::string &finish) {
  return variant{"toy", t, o, {bs, std::string("shuffle"), std::int64_t{1}, finish}};
}
launch_config toy_launch(std::int64_t ept, std::int64_t cap) {
  return launch_config{{ept, cap}};
}
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}
} // namespace

TEST_CASE("protocols print and parse by name", "[space]") {
  for (protocol p : {protocol::multipass, protocol::two_pass, protocol::atomic, protocol::ticket,
                     protocol::host})
    CHECK(protocol_from_string(to_string(p)) == p);
  CHECK(contains(config_error_of([] { (void)protocol_from_string("three_pass"); }),
                 "multipass, two_pass, atomic, ticket, host"));
}

TEST_CASE("name expressions spell T, Op and each value's cpp pattern", "[space]") {
  const family f = load_toy();
  const auto names = kernel_names(f, toy_variant(dtype::int64, reduce_op::max, 512, "ticket"));
  CHECK(names.at("pass") ==
        "rt::toy::pass<long long, rt::op_max, 512, rt::warp_strategy::shuffle, 1, "
        "rt::finish::ticket>");
  CHECK(names.at("final") == "rt::toy::final_pass<long long, rt::op_max, 512>");
  CHECK(names.at("init") == "rt::init_identity<long long, rt::op_max>");
  const auto f32 = kernel_names(f, toy_variant(dtype::float32, reduce_op::sum, 32, "atomic"));
  CHECK(f32.at("init") == "rt::init_identity<float, rt::op_sum>");
}

TEST_CASE("a launch plan carries the protocol, block size and the protocol's kernels", "[space]") {
  const family f = load_toy();
  const auto limits = device_limits::for_arch("sm_90");
  const auto two = plan_launch(f, toy_variant(dtype::float32, reduce_op::sum, 256, "two_pass"),
                               toy_launch(4, 0), limits);
  CHECK(two.proto == protocol::two_pass);
  CHECK(two.block_size == 256);
  CHECK(two.dynamic_shared_bytes == 0);
  CHECK_FALSE(two.in_place);
  CHECK(two.kernels.size() == 2);
  CHECK(two.kernels.count("final") == 1);
  const auto atomic = plan_launch(f, toy_variant(dtype::int32, reduce_op::sum, 64, "atomic"),
                                  toy_launch(4, 0), limits);
  CHECK(atomic.proto == protocol::atomic);
  CHECK(atomic.kernels.count("init") == 1);
  CHECK(atomic.kernels.count("final") == 0);
  const auto ticket = plan_launch(f, toy_variant(dtype::int32, reduce_op::sum, 64, "ticket"),
                                  toy_launch(4, 0), limits);
  CHECK(ticket.kernels.size() == 1);
}

TEST_CASE("the grid is the family's expression bound to the point and the launch config",
          "[space]") {
  const family f = load_toy();
  const auto limits = device_limits::for_arch("sm_90");
  for (std::int64_t bs : {32, 256, 1024})
    for (std::int64_t ept : {1, 4, 16}) {
      const auto uncapped =
          plan_launch(f, toy_variant(dtype::float32, reduce_op::sum, bs, "two_pass"),
                      toy_launch(ept, 0), limits);
      const auto capped =
          plan_launch(f, toy_variant(dtype::float32, reduce_op::sum, bs, "two_pass"),
                      toy_launch(ept, 2), limits);
      for (std::uint64_t n : {1ull, 1000ull, 1ull << 20, (1ull << 28) + 3}) {
        const std::uint64_t blocks = ceil_div(n, static_cast<std::uint64_t>(bs * ept));
        CHECK(uncapped.grid_for(n) == blocks);
        CHECK(capped.grid_for(n) == std::min<std::uint64_t>(blocks, 2 * limits.sm_count));
      }
    }
}

TEST_CASE("an invalid point has no launch plan", "[space]") {
  const family f = load_toy();
  const auto msg = config_error_of([&] {
    (void)plan_launch(f,
                      variant{"toy",
                              dtype::float64,
                              reduce_op::sum,
                              {std::int64_t{256}, std::string("redux"), std::int64_t{1},
                               std::string("two_pass")}},
                      toy_launch(4, 0), device_limits::for_arch("sm_90"));
  });
  CHECK(contains(msg, "toy.float64.sum.bs_256.warp_redux.v_1.fin_two_pass"));
  CHECK(contains(msg, "redux needs integers"));
}

TEST_CASE("let bindings set in_place, the protocol and dynamic shared memory", "[space]") {
  auto decl = rt_test::toy_declaration();
  decl["parameters"][3] = nlohmann::json::parse(R"json(
    {"name": "finish", "kind": "compile", "label": "fin", "cpp": "rt::finish::{value}",
     "values": [{"value": "two_pass", "let": {"in_place": true, "proto": "'multipass'",
                                              "smem": "block_size"}},
                {"value": "atomic", "let": {"proto": "'atomic'", "smem": "0"}}]})json");
  decl["protocol"] = "proto";
  decl["dynamic_shared_bytes"] = "smem * sizeof_T";
  const family f = rt_test::load_toy(decl);
  const auto limits = device_limits::for_arch("sm_90");
  const auto seed = plan_launch(f, toy_variant(dtype::float64, reduce_op::sum, 128, "two_pass"),
                                toy_launch(4, 0), limits);
  CHECK(seed.in_place);
  CHECK(seed.proto == protocol::multipass);
  CHECK(seed.dynamic_shared_bytes == 128 * sizeof(double));
  CHECK(seed.kernels.size() == 1);
  const auto atomic = plan_launch(f, toy_variant(dtype::float64, reduce_op::sum, 128, "atomic"),
                                  toy_launch(4, 0), limits);
  CHECK_FALSE(atomic.in_place);
  CHECK(atomic.dynamic_shared_bytes == 0);
}
