// The Catalog (read-only, in memory) and merging another database.
#include "catch.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "db_test_support.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

// A store with random timings for 6 variants at 8 sizes, on two devices and two operators.
void fill_random(store &s, std::int64_t dev, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> time(1e-6, 1e-3);
  std::vector<measurement_record> batch;
  for (const char *op : {"sum", "max"})
    for (std::uint64_t n = 1000; n < 100'000'000; n *= 10)
      for (int block : {32, 64, 128, 256, 512, 1024}) {
        auto m = rt_test::measurement(dev, n, block, time(rng), "float32", op);
        if (rng() % 7 == 0)
          m.status = measurement_status::wrong;
        batch.push_back(m);
      }
  s.record_measurements(batch);
}

} // namespace

TEST_CASE("the Catalog answers as the store does, by UUID or by name", "[db][catalog]") {
  rt_test::temp_dir dir;
  const auto path = dir / "results.sqlite";
  auto s = store::open(path);
  const auto d1 = s.register_device(rt_test::h100());
  const auto d2 = s.register_device(rt_test::gpu("GPU-test-0002", "NVIDIA A100-SXM4-80GB", 8));
  fill_random(s, d1, 1);
  fill_random(s, d2, 2);
  const auto c = catalog::open(path);
  REQUIRE(c.devices().size() == 2);
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> ns = {1, 999, 1000, 3162, 3163, 31622, 31623, 1ull << 40};
  for (int i = 0; i < 200; ++i)
    ns.push_back(rng() % 1'000'000'000 + 1);
  for (const auto &[dev, uuid, name] :
       {std::tuple{d1, std::string("GPU-test-0001"), std::string("NVIDIA H100 80GB HBM3")},
        std::tuple{d2, std::string("GPU-test-0002"), std::string("NVIDIA A100-SXM4-80GB")}})
    for (const char *op : {"sum", "max"})
      for (const auto n : ns) {
        const auto expected = s.best(dev, "float32", op, n);
        const auto by_uuid = c.best(uuid, "float32", op, n);
        const auto by_name = c.best(name, "float32", op, n);
        REQUIRE(expected);
        REQUIRE(by_uuid);
        REQUIRE(by_name);
        INFO(uuid << " " << op << " n=" << n);
        CHECK(by_uuid->measurement_id == expected->measurement_id);
        CHECK(by_name->measurement_id == expected->measurement_id);
        CHECK(by_uuid->bucket_n == expected->bucket_n);
        CHECK(by_uuid->variant.parameters_json == expected->variant.parameters_json);
      }
  CHECK_FALSE(c.best("GPU-none", "float32", "sum", 1000));
  CHECK_FALSE(c.best("GPU-test-0001", "int64", "sum", 1000));
}

TEST_CASE("a Catalog look-up takes well under a millisecond", "[db][catalog][timing]") {
  rt_test::temp_dir dir;
  const auto path = dir / "results.sqlite";
  {
    auto s = store::open(path);
    fill_random(s, s.register_device(rt_test::h100()), 4);
  }
  const auto c = catalog::open(path);
  std::vector<double> ns_each;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2001; ++i) {
    const auto n = rng() % 100'000'000 + 1;
    const auto t0 = std::chrono::steady_clock::now();
    const auto b = c.best("NVIDIA H100 80GB HBM3", "float32", "sum", n);
    const auto t1 = std::chrono::steady_clock::now();
    REQUIRE(b);
    ns_each.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::nth_element(ns_each.begin(), ns_each.begin() + 1000, ns_each.end());
  CHECK(ns_each[1000] < 1e-3);
}

TEST_CASE("merging deduplicates by key: more samples win, then the newer row", "[db][merge]") {
  rt_test::temp_dir dir;
  const auto here_path = dir / "here.sqlite";
  const auto there_path = dir / "there.sqlite";
  auto here = store::open(here_path);
  auto there = store::open(there_path);
  const auto h_dev = here.register_device(rt_test::h100());
  const auto t_dev = there.register_device(rt_test::h100()); // same UUID: one device
  auto t_other = rt_test::h100("GPU-test-0009");
  const auto t_dev2 = there.register_device(t_other);

  auto with = [](measurement_record m, std::size_t samples, std::string created, double s) {
    m.samples_s.assign(samples, s);
    m.created_at = std::move(created);
    return m;
  };
  // 128: there has more samples -> replaced. 256: same count, there newer -> replaced.
  // 512: same count, here newer -> kept. 1024: same count and time -> kept (full tie).
  // 64: only there -> inserted; on the second device too.
  struct in_both {
    int block;
    const char *here_created; // here: 3 samples of 1e-5 s
    std::size_t there_samples;
    const char *there_created;
    double there_s;
  };
  for (const auto &b :
       {in_both{128, "2026-01-01T00:00:00.000Z", 5, "2025-01-01T00:00:00.000Z", 2e-5},
        in_both{256, "2026-01-01T00:00:00.000Z", 3, "2026-02-01T00:00:00.000Z", 3e-5},
        in_both{512, "2026-03-01T00:00:00.000Z", 3, "2026-02-01T00:00:00.000Z", 4e-5},
        in_both{1024, "2026-03-01T00:00:00.000Z", 3, "2026-03-01T00:00:00.000Z", 5e-5}}) {
    here.record_measurement(
        with(rt_test::measurement(h_dev, 4096, b.block, 1), 3, b.here_created, 1e-5));
    there.record_measurement(with(rt_test::measurement(t_dev, 4096, b.block, 1), b.there_samples,
                                  b.there_created, b.there_s));
  }
  there.record_measurement(with(rt_test::measurement(t_dev, 4096, 64, 1), 3, "", 6e-5));
  there.record_measurement(with(rt_test::measurement(t_dev2, 4096, 64, 1), 3, "", 7e-5));
  build_record b;
  b.cache_key = "only-there";
  b.program_key = b.variant_label = "p";
  b.arch = "sm_90";
  b.nvrtc_version = "12.4";
  b.options = "-arch=sm_90";
  b.cubin = {std::byte{1}, std::byte{2}};
  there.record_build(b);

  const auto stats = here.merge_from(there_path);
  CHECK(stats.inserted == 2);
  CHECK(stats.replaced == 2);
  CHECK(stats.kept == 2);
  CHECK(stats.builds_inserted == 1);
  REQUIRE(here.devices().size() == 2);
  const auto median_of = [&](int block) {
    for (const auto &m : here.history(h_dev, "float32", "sum", 4096))
      if (m.variant.label == "tunable.float32.sum.bs_" + std::to_string(block))
        return m.stats->median_s;
    return -1.0;
  };
  CHECK(median_of(128) == 2e-5);
  CHECK(median_of(256) == 3e-5);
  CHECK(median_of(512) == 1e-5);
  CHECK(median_of(1024) == 1e-5);
  CHECK(median_of(64) == 6e-5);
  CHECK(here.find_build("only-there")->cubin.size() == 2);
  CHECK(here.integrity_check() == "ok");

  // Merging again changes nothing.
  const auto again = here.merge_from(there_path);
  CHECK(again.inserted == 0);
  CHECK(again.replaced == 0);
  CHECK(again.kept == 6);
  CHECK(here.history(h_dev, "float32", "sum").size() == 5);
}

TEST_CASE("equal medians are decided by the labels, whatever order the rows were written in",
          "[db][catalog]") {
  // Several workers, or a merge, write the same points in another order: the answer of the
  // Catalog and of store::best must not follow the row ids.
  for (const bool reversed : {false, true}) {
    rt_test::temp_dir dir;
    auto s = store::open(dir / "r.db");
    const auto d = s.register_device(rt_test::h100());
    std::vector<int> blocks = {512, 128, 1024};
    if (reversed)
      std::reverse(blocks.begin(), blocks.end());
    for (const int b : blocks) { // the same median: samples all exactly 5.6 µs
      auto m = rt_test::measurement(d, 1 << 16, b, 5.6e-6);
      m.samples_s = {5.6e-6, 5.6e-6, 5.6e-6};
      s.record_measurement(m);
    }
    INFO("reversed: " << reversed);
    const auto c = catalog::load(s.connection());
    CHECK(c.find("GPU-test-0001", "float32", "sum", 1 << 16)->variant.label ==
          "tunable.float32.sum.bs_1024"); // the smallest label of the three
    CHECK(s.best(d, "float32", "sum", 1 << 16)->variant.label == "tunable.float32.sum.bs_1024");
  }
}

TEST_CASE("two GPUs of one model answer together; another model stays apart", "[db][catalog]") {
  // A sweep shared by two H100s leaves half the points under each UUID: either UUID, and
  // the name, must answer with the fastest of both halves.
  rt_test::temp_dir dir;
  auto s = store::open(dir / "r.db");
  const auto a = s.register_device(rt_test::h100("GPU-a"));
  const auto b = s.register_device(rt_test::h100("GPU-b"));
  auto slower = rt_test::h100("GPU-c"); // the same name, fewer SMs: another model
  slower.sm_count = 114;
  const auto c = s.register_device(slower);
  s.record_measurement(rt_test::measurement(a, 1 << 20, 128, 3e-6));
  s.record_measurement(rt_test::measurement(b, 1 << 20, 256, 2e-6)); // the model's best
  s.record_measurement(rt_test::measurement(c, 1 << 20, 512, 1e-6)); // faster, other model
  const auto cat = catalog::load(s.connection());
  CHECK(cat.devices().size() == 2);
  for (const char *uuid : {"GPU-a", "GPU-b"}) {
    INFO(uuid);
    CHECK(cat.find(uuid, "float32", "sum", 1 << 20)->variant.label ==
          "tunable.float32.sum.bs_256");
  }
  CHECK(cat.find("GPU-c", "float32", "sum", 1 << 20)->variant.label ==
        "tunable.float32.sum.bs_512");
  CHECK(s.best(a, "float32", "sum", 1 << 20)->variant.label == "tunable.float32.sum.bs_256");
  CHECK(s.best(c, "float32", "sum", 1 << 20)->variant.label == "tunable.float32.sum.bs_512");
}
