#include "reducetune/runtime/reducer.hpp"

#include "reducetune/db/catalog.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/runtime/application_ranking.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/folder_cache.hpp"
#include "reducetune/runtime/reducer_axis.hpp"
#include "reducetune/runtime/reducer_device.hpp"
#include "reducetune/space/space.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <set>

namespace reducetune {

struct reducer::state {
  reducer_context context;
  std::mutex mutex; // guards devices
  std::map<int, std::unique_ptr<reducer_device>> devices;
  std::map<int, std::unique_ptr<axis_device>> axis_devices;
  std::vector<std::string> fallbacks;
  std::set<std::string> said;

  state(dtype type, reduce_op op, reducer_options options, dispatch_table table) {
    const auto folder =
        options.cache_dir.empty() ? folder_cache_backend::default_folder() : options.cache_dir;
    context = {type, op, std::move(options), std::move(table),
               std::make_shared<compiler>(template_library::from_environment(),
                                          std::make_shared<compile_cache>(
                                              std::make_shared<folder_cache_backend>(folder))),
               [this](const std::string &line) { note(line); }};
  }

  // Devices call this (under their own lock; note_mutex guards the log).
  void note(const std::string &line) {
    std::lock_guard lock(note_mutex);
    if (!said.insert(line).second)
      return;
    fallbacks.push_back(line);
    if (context.options.log_fallbacks)
      std::cerr << "reducetune: " << line << "\n";
  }
  std::mutex note_mutex;
};

reducer::reducer(dtype type, reduce_op op, std::unique_ptr<state> s)
    : m_type(type), m_op(op), m_state(std::move(s)) {}
reducer::reducer(reducer &&) noexcept = default;
reducer &reducer::operator=(reducer &&) noexcept = default;
reducer::~reducer() = default;

reducer reducer::from_database(const std::filesystem::path &db, dtype type, reduce_op op,
                               reducer_options options) {
  const auto file = db::open_for_reading(db);
  const auto c = db::catalog::load(file, options.selection);
  auto devices = dispatch_table::from_catalog(c, type, op).devices();
  if (options.extra_launch_s > 0)
    rank_for_applications(devices, c, file, type, op, options.selection,
                          template_library::from_environment(), options.extra_launch_s);
  dispatch_table table(std::move(devices));
  options.axis_tables = axis_tables_from_catalog(c, template_library::from_environment(), type,
                                                 op, options.axis_level);
  return {type, op, std::make_unique<state>(type, op, std::move(options), std::move(table))};
}

reducer reducer::from_json(const std::filesystem::path &json, dtype type, reduce_op op,
                           reducer_options options) {
  const auto doc = dispatch_table::read_file(json); // one read: whole-array and axis parts
  auto table =
      dispatch_table::from_json(doc, type, op, options.selection, options.extra_launch_s > 0);
  options.axis_tables =
      axis_tables_from_json(doc, type, op, options.selection, options.axis_level);
  return {type, op, std::make_unique<state>(type, op, std::move(options), std::move(table))};
}

reducer reducer::for_point(const search_space &s, const point &p, reducer_options options) {
  dispatch_device one;
  one.name = "one point";
  one.any_device = true;
  // the labels name the point in a fallback's message; the typed point is what is prepared
  one.rules.push_back({1, s.decl().name, variant_label(s.decl(), p), launch_label(s.decl(), p),
                       "unknown", false, p});
  options.selection = {true, false}; // the caller chose the point
  dispatch_table table({std::move(one)});
  return {s.type(), s.op(),
          std::make_unique<state>(s.type(), s.op(), std::move(options), std::move(table))};
}

reducer reducer::untuned(dtype type, reduce_op op, reducer_options options) {
  return {type, op, std::make_unique<state>(type, op, std::move(options), dispatch_table{})};
}

namespace {

// n = 0 is refused before any device is touched: the same message with or without a GPU.
std::uint64_t checked(std::uint64_t n) {
  if (n == 0)
    throw invalid_configuration("a reduction needs n >= 1 elements (n = 0 has no value to "
                                "return; an empty sum's identity is the caller's choice)");
  return n;
}

} // namespace

namespace {

int current_device() {
  int ordinal = 0;
  if (const cudaError_t e = cudaGetDevice(&ordinal); e != cudaSuccess) {
    (void)cudaGetLastError();
    throw device_error(std::string{"no CUDA device: "} + cudaGetErrorString(e));
  }
  return ordinal;
}

} // namespace

namespace {

// The current device's entry of `devices`, made on first use (under the state's mutex: the
// whole-array and the axis calls each keep one per device).
template <class Device>
Device &current_of(std::map<int, std::unique_ptr<Device>> &devices, std::mutex &mutex,
                   const reducer_context &context) {
  const int ordinal = current_device();
  std::lock_guard lock(mutex);
  auto &d = devices[ordinal];
  if (!d)
    d = std::make_unique<Device>(context, ordinal);
  return *d;
}

} // namespace

reducer_device &reducer::device() {
  return current_of(m_state->devices, m_state->mutex, m_state->context);
}

axis_device &reducer::axis() {
  return current_of(m_state->axis_devices, m_state->mutex, m_state->context);
}

void reducer::reduce_axis(const void *in, const reduction_shape &shape, void *out,
                          cudaStream_t stream) {
  validate(problem{m_type, m_op, shape}); // before the device: no GPU needed to refuse a 0
  axis().reduce(in, shape, out, stream);
}

axis_choice reducer::choice_axis(const reduction_shape &shape) {
  validate(problem{m_type, m_op, shape});
  return axis().choice(shape);
}

void reducer::reduce(const void *in, std::uint64_t n, void *out, cudaStream_t stream) {
  const std::uint64_t count = checked(n); // before the device: no GPU needed to refuse 0
  device().reduce(in, count, out, stream);
}

void reducer::reduce_to_host(const void *in, std::uint64_t n, void *host_out,
                             cudaStream_t stream) {
  const std::uint64_t count = checked(n);
  device().reduce_to_host(in, count, host_out, stream);
}

reducer_choice reducer::choice(std::uint64_t n) { const std::uint64_t count = checked(n);
  return device().choice(count); }

std::vector<std::string> reducer::fallbacks() const {
  std::lock_guard lock(m_state->note_mutex);
  return m_state->fallbacks;
}

} // namespace reducetune
