// A workload's host data without a GPU: make_host_data generates the next type's data into the
// previous data's pages when nothing else holds them (their first touch cost more than the
// generating), with the bytes generate_bytes gives, and never into bytes someone still reads.
#include "catch.hpp"

#include "reducetune/measure/prepared_workload.hpp"

#include <cstring>

using namespace reducetune;

namespace {

bool holds_bytes_of(const host_data &d, const workload &w) {
  const auto expected = generate_bytes(w.type, w.pattern, w.op, w.n, w.seed);
  return d.n == w.n && d.capacity >= expected.size() &&
         std::memcmp(d.bytes.get(), expected.data(), expected.size()) == 0;
}

} // namespace

TEST_CASE("host data of another type is generated into the previous data's bytes",
          "[measure][workload]") {
  const workload float64{dtype::float64, reduce_op::sum, (1ULL << 20) + 3};
  auto data = make_host_data(float64);
  CHECK(holds_bytes_of(*data, float64));
  const unsigned char *bytes = data->bytes.get();
  const workload int32{dtype::int32, reduce_op::max, 1ULL << 20, data_pattern::all_negative};
  data = make_host_data(int32, std::move(data));
  CHECK(data->bytes.get() == bytes); // no new pages
  CHECK(data->capacity == float64.n * 8);
  CHECK(holds_bytes_of(*data, int32));
  CHECK(data->serves(int32));
  CHECK_FALSE(data->serves(float64));
}

TEST_CASE("host data someone still holds, or too small, is not written over",
          "[measure][workload]") {
  const workload int32{dtype::int32, reduce_op::sum, 1ULL << 20};
  auto data = make_host_data(int32);
  const std::shared_ptr<const host_data> reader = data;           // a prepared_workload, say
  const workload int64{dtype::int64, reduce_op::sum, 1ULL << 19}; // fits, but is read
  auto other = make_host_data(int64, std::move(data));
  CHECK(other->bytes.get() != reader->bytes.get());
  CHECK(holds_bytes_of(*reader, int32));
  CHECK(holds_bytes_of(*other, int64));
  const workload larger{dtype::float64, reduce_op::min, 1ULL << 20}; // 8 MiB > 4 MiB
  other = make_host_data(larger, std::move(other));
  CHECK(other->capacity == larger.n * 8); // a new allocation (the old one freed first: the
                                          // allocator may hand back the same address)
  CHECK(holds_bytes_of(*other, larger));
}
