// Choosing and building reducetune-bench's variants: a variant_builder checks each (variant,
// launch) against the search space, records its label, launch and racy flag, and compiles the
// whole set in one batch; table_variants and racy_variants decide which seeds, presets and
// counterparts go in (see variants.hpp).
#include "bench/variants.hpp"

#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/jit/variant_request.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace reducetune::bench {

namespace {

bool wanted(const options &o, const std::string &name) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
}

std::string flag_of(const family &f, const variant &v) {
  std::size_t k = 0;
  for (const auto &p : f.parameters) {
    if (p.kind != parameter_kind::compile) continue;
    if (const auto idx = p.index_of(v.values[k]); idx && !p.values[*idx].flag.empty())
      return p.values[*idx].flag;
    ++k;
  }
  return "";
}

// The variant with one compile parameter changed (the racy mode's volatile_* counterparts).
variant with_value(const family &f, variant v, const std::string &name, const value &x) {
  std::size_t k = 0;
  for (const auto &p : f.parameters) {
    if (p.kind != parameter_kind::compile) continue;
    if (p.name == name) v.values[k] = x;
    ++k;
  }
  return v;
}

struct variant_builder {
  const device_info &device;
  const device_limits limits;
  compiler &comp;
  std::vector<bench_variant> out;
  std::vector<compile_request> requests;

  void add(const std::string &name, const family &f, const variant &v, const launch_config &c) {
    const search_space space(f, v.type, v.op, limits);
    if (const auto why = space.check(v, c); !why) {
      std::fprintf(stderr, "reducetune-bench: %s (%s) is not a valid point here: %s\n",
                   name.c_str(), to_label(f, v).c_str(), why.reasons().c_str());
      return;
    }
    bench_variant b;
    b.name = name;
    b.label = to_label(f, v);
    b.launch = to_label(f, c);
    b.flag = flag_of(f, v);
    b.slow = name == "harris0" || name == "harris1" || name == "harris2";
    b.plan = space.plan_launch(v, c);
    out.push_back(std::move(b));
    requests.push_back(request_for(f, v, device.arch()));
  }

  // Compiles everything in one batch and loads it; a variant that fails to compile is dropped.
  std::vector<bench_variant> finish() {
    const auto outcomes = comp.compile_batch(requests);
    std::vector<bench_variant> ready;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!outcomes[i].program) {
        std::fprintf(stderr, "reducetune-bench: %s does not compile:\n%s\n", out[i].name.c_str(),
                     outcomes[i].error.c_str());
        continue;
      }
      out[i].program = outcomes[i].program;
      out[i].module = std::make_shared<loaded_module>(*out[i].program);
      ready.push_back(std::move(out[i]));
    }
    return ready;
  }
};

std::optional<preset_point> preset_named(const search_space &s, const std::string &name) {
  for (auto &p : s.presets())
    if (p.name == name) return p;
  return std::nullopt;
}

} // namespace

std::vector<bench_variant> table_variants(const options &o, const device_info &device,
                                          compiler &comp, dtype t) {
  variant_builder b{device, limits_of(device), comp, {}, {}};
  const family seeds = family::load(comp.library(), "seeds");
  const search_space ss(seeds, t, o.op, b.limits);
  for (int k = 0; k <= 6; ++k) {
    const std::string name = "harris" + std::to_string(k);
    if (const auto p = preset_named(ss, name); p && wanted(o, name))
      b.add(name, seeds, p->point, p->launch);
  }
  const family tunable = family::load(comp.library(), "tunable");
  const search_space ts(tunable, t, o.op, b.limits);
  auto presets = ts.presets();
  std::stable_partition(presets.begin(), presets.end(),
                        [](const preset_point &p) { return p.name == "good"; });
  for (const auto &p : presets)
    if (wanted(o, p.name)) b.add(p.name, tunable, p.point, p.launch);
  return b.finish();
}

std::vector<bench_variant> racy_variants(const options &o, const device_info &device,
                                         compiler &comp, dtype t) {
  variant_builder b{device, limits_of(device), comp, {}, {}};
  const family tunable = family::load(comp.library(), "tunable");
  const search_space ts(tunable, t, o.op, b.limits);
  if (const auto good = preset_named(ts, "good")) {
    const auto add = [&](const std::string &name, const variant &v) {
      if (wanted(o, name)) b.add(name, tunable, v, good->launch);
    };
    add("good", good->point); // shuffle: the control
    for (const std::string strategy : {"tree", "warp_partials"})
      for (const std::string warp : {"volatile_unsafe", "volatile_sync"}) {
        const variant v = with_value(tunable, with_value(tunable, good->point, "warp", warp),
                                     "block_strategy", strategy);
        add("good." + warp + "." + strategy, v);
      }
  }
  if (const auto p = preset_named(ts, "harris6_point")) {
    if (wanted(o, "harris6_point")) b.add("harris6_point", tunable, p->point, p->launch);
    if (wanted(o, "harris6_point.volatile_sync"))
      b.add("harris6_point.volatile_sync", tunable,
            with_value(tunable, p->point, "warp", std::string{"volatile_sync"}), p->launch);
  }
  const family seeds = family::load(comp.library(), "seeds");
  const search_space ss(seeds, t, o.op, b.limits);
  for (const std::string name :
       {"harris4", "harris5", "harris6", "reduceUnrollWarps8", "harris5_shfl"})
    if (const auto p = preset_named(ss, name); p && wanted(o, name))
      b.add(name, seeds, p->point, p->launch);
  return b.finish();
}

} // namespace reducetune::bench
