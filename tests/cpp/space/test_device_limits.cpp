#include "catch.hpp"

#include "toy_family.hpp"

#include "reducetune/space/device_limits.hpp"

using namespace reducetune;
using rt_test::config_error_of;
using rt_test::contains;

TEST_CASE("the architecture table knows sm_80 to sm_120", "[space]") {
  CHECK(device_limits::known_archs() ==
        std::vector<std::string>{"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"});
  const auto a100 = device_limits::for_arch("sm_80");
  CHECK(a100.arch == 80);
  CHECK(a100.sm_count == 108);
  const auto h100 = device_limits::for_arch("sm_90");
  CHECK(h100.arch == 90);
  CHECK(h100.sm_count == 132);
  CHECK(h100.max_threads_per_block == 1024);
  CHECK(h100.warp_size == 32);
  CHECK(h100.max_shared_per_block == 48 * 1024);
  CHECK(h100.max_shared_per_block_optin == 227 * 1024);
}

TEST_CASE("an architecture may be written sm_90, 90 or 9.0", "[space]") {
  CHECK(device_limits::for_arch("90") == device_limits::for_arch("sm_90"));
  CHECK(device_limits::for_arch("9.0") == device_limits::for_arch("sm_90"));
  CHECK(device_limits::for_arch("sm_100").arch == 100);
}

TEST_CASE("an unknown architecture lists the known ones", "[space]") {
  const auto msg = config_error_of([] { (void)device_limits::for_arch("sm_70"); });
  CHECK(contains(msg, "'sm_70'"));
  CHECK(contains(msg, "sm_80, sm_86"));
  CHECK(contains(config_error_of([] { (void)device_limits::for_arch("hopper"); }), "'hopper'"));
}
