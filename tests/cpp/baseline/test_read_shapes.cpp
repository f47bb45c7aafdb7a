// Without a GPU: the streaming ceiling's read shapes (baseline/streaming_read.cu). A shape's
// name is how the axis benchmark and `_core.streaming_read` ask for it, so each names one
// shape and says what it is; CUB's own DeviceReduce geometry is among them, so that CUB cannot
// read faster than the ceiling beyond noise (docs/results/h200_2026-11-27_ceiling_shapes);
// and a read the 16-byte kernels cannot do is refused before any device is touched.
#include "catch.hpp"

#include "reducetune/baseline/streaming_read.hpp"
#include "reducetune/errors.hpp"

#include <cstdint>
#include <set>
#include <string>

using namespace reducetune;

namespace {

// What a shape's name must read: "<layout> <block>x<unroll>", then " x<waves> waves" beyond one.
std::string expected_name(const read_shape &s) {
  std::string n = s.layout == read_layout::grid_stride ? "grid-stride " : "even-share ";
  n += std::to_string(s.block) + "x" + std::to_string(s.unroll);
  if (s.waves > 1) n += " x" + std::to_string(s.waves) + " waves";
  return n;
}

} // namespace

TEST_CASE("every read shape has a name of its own that says what it is", "[baseline]") {
  std::set<std::string> names;
  for (const read_shape &s : read_shapes()) {
    INFO(s.name);
    CHECK(std::string(s.name) == expected_name(s));
    CHECK(names.insert(s.name).second);
    CHECK(s.waves >= 1);
    CHECK((s.block >= 32 && s.block <= 1024 && s.block % 32 == 0));
  }
  CHECK(names.size() >= 2);
}

TEST_CASE("CUB's DeviceReduce geometry is one of the ceiling's shapes", "[baseline]") {
  // CCCL 3.0 on sm_90: even shares of tiles of 256 threads x 16 floats (4 vectors of 16 bytes),
  // over a grid of 5 waves (CUB's subscription factor).
  bool found = false;
  for (const read_shape &s : read_shapes())
    found = found || (s.layout == read_layout::even_share && s.block == 256 && s.unroll == 4 &&
                      s.waves == 5);
  CHECK(found);
}

TEST_CASE("a streaming read the 16-byte loads cannot do is refused without a device",
          "[baseline]") {
  alignas(16) static const unsigned char data[64] = {};
  CHECK_NOTHROW(require_streaming_read(data, 64));
  CHECK_THROWS_AS(require_streaming_read(data, 60), invalid_configuration);
  CHECK_THROWS_AS(require_streaming_read(data + 8, 32), invalid_configuration);
}

TEST_CASE("a mixed stream that cannot be written is refused without a device", "[baseline]") {
  alignas(16) static const unsigned char data[64] = {};
  alignas(16) static unsigned char out[64] = {};
  CHECK_NOTHROW(require_streaming_mixed(data, 64, out, 32));
  CHECK_NOTHROW(require_streaming_mixed(data, 64, out, 6)); // rounded down to one word
  CHECK_THROWS_AS(require_streaming_mixed(data, 60, out, 32), invalid_configuration);
  CHECK_THROWS_AS(require_streaming_mixed(data, 64, out + 2, 32), invalid_configuration);
  CHECK_THROWS_AS(require_streaming_mixed(data, 64, out, 65), invalid_configuration);
}
