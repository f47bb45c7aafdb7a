#include "common.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compile_ahead.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/verify/patterns.hpp"

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <optional>

namespace rtpy {
namespace {

struct loaded {
  rt::template_library lib;
  std::map<std::string, rt::family> families;
  std::unique_ptr<rt::compiler> comp;
  std::unique_ptr<rt::compile_ahead> ahead; // after comp: destroyed (its threads joined) first
};

std::mutex g_mutex;
std::optional<std::string> g_dir; // set_templates(); nullopt: from the environment
std::unique_ptr<loaded> g_loaded;

loaded &state() {
  std::lock_guard lock(g_mutex);
  if (!g_loaded) {
    auto s = std::make_unique<loaded>(loaded{
        g_dir && !g_dir->empty() ? rt::template_library::embedded_with(*g_dir)
                                 : rt::template_library::from_environment(),
        {}, nullptr, nullptr});
    for (auto &f : rt::family::load_all(s->lib))
      s->families.emplace(f.name, std::move(f));
    s->comp = std::make_unique<rt::compiler>(s->lib);
    g_loaded = std::move(s);
  }
  return *g_loaded;
}

std::optional<rt::value> find(const params &p, const std::string &name) {
  const auto it = p.find(name);
  if (it == p.end())
    return std::nullopt;
  return it->second;
}

void reject_unknown(const rt::family &f, const params &p) {
  for (const auto &[name, v] : p)
    if (!f.find_parameter(name))
      throw rt::invalid_configuration("family '" + f.name + "' has no parameter '" + name + "'");
}

} // namespace

const rt::template_library &library() { return state().lib; }

void set_templates(const std::string &dir) {
  std::lock_guard lock(g_mutex);
  g_dir = dir;
  g_loaded.reset();
}

const rt::family &family_named(const std::string &name) {
  auto &s = state();
  const auto it = s.families.find(name);
  if (it == s.families.end()) {
    std::string known;
    for (const auto &[n, f] : s.families)
      known += (known.empty() ? "" : ", ") + n;
    throw rt::invalid_configuration("unknown template family '" + name + "' (known: " + known +
                                    "; templates from " + s.lib.origin() + ")");
  }
  return it->second;
}

rt::compiler &shared_compiler() { return *state().comp; }

void stop_compile_ahead() {
  std::unique_ptr<rt::compile_ahead> gone;
  {
    std::lock_guard lock(g_mutex);
    if (g_loaded)
      gone = std::move(g_loaded->ahead);
  } // its threads joined here, outside the lock
}

rt::compile_ahead &shared_compile_ahead(unsigned threads) {
  auto &s = state();
  std::lock_guard lock(g_mutex);
  if (!s.ahead)
    s.ahead = std::make_unique<rt::compile_ahead>(*s.comp, threads);
  return *s.ahead;
}

namespace {
// The values of the parameters `idx` names (compile-time or launch, in declaration order):
// read from p where it names them, written to out by name. A variant and a launch config hold
// their values the same way, so one pair of loops serves both.
void read_named(const rt::family &f, const std::vector<std::size_t> &idx, const params &p,
                std::vector<rt::value> &values) {
  for (std::size_t i = 0; i < idx.size(); ++i)
    if (auto x = find(p, f.parameters[idx[i]].name))
      values[i] = *x;
}

void write_named(const rt::family &f, const std::vector<std::size_t> &idx,
                 const std::vector<rt::value> &values, params &out) {
  for (std::size_t i = 0; i < idx.size(); ++i)
    out[f.parameters[idx[i]].name] = values[i];
}
} // namespace

rt::variant to_variant(const rt::family &f, rt::dtype t, rt::reduce_op o, const params &p) {
  reject_unknown(f, p);
  rt::variant v = rt::default_variant(f, t, o);
  read_named(f, f.compile_parameters(), p, v.values);
  rt::validate(f, v);
  return v;
}

rt::launch_config to_launch(const rt::family &f, const params &p) {
  reject_unknown(f, p);
  rt::launch_config c = rt::default_launch_config(f);
  read_named(f, f.launch_parameters(), p, c.values);
  rt::validate(f, c);
  return c;
}

params to_params(const rt::family &f, const rt::variant &v) {
  params out;
  write_named(f, f.compile_parameters(), v.values, out);
  return out;
}

params to_params(const rt::family &f, const rt::variant &v, const rt::launch_config &c) {
  params out = to_params(f, v);
  write_named(f, f.launch_parameters(), c.values, out);
  return out;
}

rt::workload to_workload(const nb::dict &d) {
  rt::workload w;
  w.type = rt::dtype_from_string(get_or<std::string>(d, "dtype", "float32"));
  w.op = rt::op_from_string(get_or<std::string>(d, "op", "sum"));
  w.n = get_or<std::uint64_t>(d, "n", w.n);
  w.pattern = rt::data_pattern_from_string(get_or<std::string>(d, "pattern", "uniform"));
  w.seed = get_or<std::uint64_t>(d, "seed", w.seed);
  w.offset_elements = get_or<unsigned>(d, "offset_elements", 0);
  if (w.n == 0)
    throw rt::invalid_configuration("a workload needs n >= 1");
  return w;
}

nb::dict device_to_dict(const rt::device_info &d) {
  nb::dict out = device_model_dict(d);
  out["ordinal"] = d.ordinal;
  out["arch"] = d.arch();
  out["global_memory_bytes"] = d.global_memory_bytes;
  out["max_threads_per_block"] = d.max_threads_per_block;
  out["max_shared_per_block"] = d.max_shared_per_block;
  out["runtime_version"] = d.runtime_version;
  return out;
}

// The extension's CUDA runtime is its own (static): the device PyTorch or CuPy made current
// is not current here until said. device < 0: leave the current one.
void make_current(int device) {
  int current = -1;
  if (device < 0 || (cudaGetDevice(&current) == cudaSuccess && current == device))
    return;
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    (void)cudaGetLastError();
    throw rt::device_error("cannot use CUDA device " + std::to_string(device) + ": " +
                           cudaGetErrorString(e));
  }
}

} // namespace rtpy
