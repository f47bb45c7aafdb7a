// What a device model is (records.hpp, model_fields): the SQL condition that groups devices by
// model and the key that names a model in shared study names say the same thing.
#include "catch.hpp"

#include <set>

#include "db_test_support.hpp"
#include "reducetune/db/records.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

// The devices the store's same-model condition puts with device id.
std::set<std::int64_t> same_model_ids(store &s, std::int64_t id) {
  auto q = s.connection().prepare(std::string("SELECT d2.id FROM rt_devices d1 JOIN rt_devices d2"
                                              " ON ") +
                                  same_model_sql + " WHERE d1.id = ?1");
  q.bind(1, id);
  std::set<std::int64_t> ids;
  while (q.step())
    ids.insert(q.column_int(0));
  return ids;
}

} // namespace

TEST_CASE("a model key names the model as study names have always said it", "[db][model]") {
  // Study names are persisted and resumed by name: this text must not change.
  CHECK(device_model_key(rt_test::h100()) == "NVIDIA H100 80GB HBM3|132SM|2619000kHz");
  CHECK(std::string(same_model_sql) ==
        "d2.name = d1.name AND d2.sm_count = d1.sm_count AND d2.memory_clock_khz = "
        "d1.memory_clock_khz");
}

TEST_CASE("the model key and the same-model SQL agree on every pair of devices",
          "[db][model]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "r.db");
  // One device, a twin differing in what is not the model (UUID, versions, L2, bus), and one
  // device differing from the first in each model field.
  std::vector<device_record> devices{rt_test::h100("GPU-a"), rt_test::h100("GPU-b")};
  devices[1].driver_version = 13000;
  devices[1].l2_bytes = 40 << 20;
  devices[1].bus_width_bits = 4096;
  devices.push_back(rt_test::h100("GPU-name"));
  devices.back().name = "NVIDIA H100 PCIe";
  devices.push_back(rt_test::h100("GPU-sm"));
  devices.back().sm_count = 114;
  devices.push_back(rt_test::h100("GPU-clock"));
  devices.back().memory_clock_khz = 1593000;
  REQUIRE(devices.size() == 2 + model_fields.size()); // one device per model field
  std::vector<std::int64_t> ids;
  for (const auto &d : devices)
    ids.push_back(s.register_device(d));

  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto same = same_model_ids(s, ids[i]);
    for (std::size_t j = 0; j < devices.size(); ++j) {
      INFO(devices[i].uuid << " and " << devices[j].uuid);
      const bool by_key = device_model_key(devices[i]) == device_model_key(devices[j]);
      CHECK(same.count(ids[j]) == (by_key ? 1u : 0u));
      CHECK(by_key == (i == j || i + j == 1)); // only GPU-a and GPU-b are one model
    }
  }
}
