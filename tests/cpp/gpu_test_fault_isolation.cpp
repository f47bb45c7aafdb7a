// On the GPU: a study-like loop of ten variants through reducetune-worker, with the faulting
// test family (a write through a wild pointer: an illegal address that poisons the context) in
// the middle. The faulting one is a failure whose reason names the fault; the nine others are
// verified measurements, the ones after it from a fresh worker.
//
// The worker executable is found by default_worker_path() ($REDUCETUNE_WORKER, or the build
// tree's tuner/reducetune-worker beside tests/).
#include "catch.hpp"

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/jit/template_library.hpp"
#include "reducetune/measure/remote_evaluate.hpp"
#include "reducetune/space/space.hpp"

#include <string>
#include <variant>
#include <vector>

using namespace reducetune;

namespace {

struct study_point {
  std::string templates;
  std::string family;
  std::string variant_label;
  std::string launch_label;
};

// The seed-faithful unsafe warp unroll may be wrong on Volta and later: not a "healthy" point.
bool is_racy(const variant &v) {
  for (const value &x : v.values)
    if (to_string(x) == "volatile_unsafe") return true;
  return false;
}

// Nine well-behaved points (tunable presets and sampled points, seeds without the racy warp
// unroll) and the faulting preset in the middle.
std::vector<study_point> ten_points(const device_limits &limits) {
  const template_library lib = template_library::embedded();
  std::vector<study_point> points;
  const family tunable = family::load(lib, "tunable");
  const search_space tspace(tunable, dtype::int32, reduce_op::sum, limits);
  for (const auto &p : tspace.presets())
    if (!is_racy(p.point) && tspace.check(p.point, p.launch))
      points.push_back({"", "tunable", to_label(tunable, p.point), to_label(tunable, p.launch)});
  const family seeds = family::load(lib, "seeds");
  const search_space sspace(seeds, dtype::int32, reduce_op::sum, limits);
  for (const auto &p : sspace.presets())
    if (p.name == "harris1" || p.name == "harris3" || p.name == "harris5_shfl")
      points.push_back({"", "seeds", to_label(seeds, p.point), to_label(seeds, p.launch)});
  for (const variant &v : tspace.sample(64)) {
    if (points.size() >= 9) break;
    if (is_racy(v)) continue;
    const auto configs = tspace.valid_launch_configs(v);
    if (configs.empty()) continue;
    points.push_back({"", "tunable", to_label(tunable, v), to_label(tunable, configs.front())});
  }
  REQUIRE(points.size() >= 9);
  points.resize(9);

  const template_library with_faulting =
      template_library::embedded_with(RT_TEST_DATA_DIR "/templates");
  const family faulting = family::load(with_faulting, "faulting");
  const search_space fspace(faulting, dtype::int32, reduce_op::sum, limits);
  const preset_point fault = fspace.presets().front();
  points.insert(points.begin() + 4, {RT_TEST_DATA_DIR "/templates", "faulting",
                                     to_label(faulting, fault.point),
                                     to_label(faulting, fault.launch)});
  return points;
}

} // namespace

TEST_CASE("a faulting variant in the middle of ten fails with its reason; the nine others "
          "are measured",
          "[gpu][worker][fault]") {
  const device_info device = query_device();
  const std::vector<study_point> points = ten_points(limits_of(device));
  REQUIRE(points.size() == 10);

  remote_evaluator client;
  INFO("worker: " << client.worker_path());
  int measured = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const study_point &p = points[i];
    worker_request r;
    r.templates = p.templates;
    r.family = p.family;
    r.variant_label = p.variant_label;
    r.launch_label = p.launch_label;
    r.load = workload{dtype::int32, reduce_op::sum, (1ULL << 20) + 3, data_pattern::uniform, 7, 1};
    r.options.cold_rule.min_samples = r.options.cold_rule.max_samples = 10;
    r.options.hot = false;
    const worker_reply reply = client.call(r);
    INFO("point " << i << ": " << p.variant_label << " / " << p.launch_label);
    if (p.family == "faulting") {
      REQUIRE(std::holds_alternative<failure>(reply.result));
      const failure &f = std::get<failure>(reply.result);
      INFO("reason: " << f.reason);
      CHECK((f.kind == failure_kind::launch_error || f.kind == failure_kind::worker_crashed));
      CHECK((f.reason.find("illegal") != std::string::npos ||
             f.reason.find("launch failure") != std::string::npos ||
             f.reason.find("SIGSEGV") != std::string::npos));
      CHECK(reply.exits);
      CHECK(client.worker_pid() == -1);
      continue;
    }
    if (const auto *f = std::get_if<failure>(&reply.result))
      FAIL(to_string(f->kind) << ": " << f->reason);
    const auto &m = std::get<measurement>(reply.result);
    CHECK(m.check.ok);
    CHECK(m.cold.samples_s.size() == 10);
    CHECK(m.bytes_per_s > 0);
    ++measured;
  }
  CHECK(measured == 9);
  CHECK(client.workers_started() == 2); // one before the fault, a fresh one after it
}
