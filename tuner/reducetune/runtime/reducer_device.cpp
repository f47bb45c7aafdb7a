#include "reducetune/runtime/reducer_device.hpp"

#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/cuda/kernel_launch.hpp"
#include "reducetune/cuda/reduction_steps.hpp"
#include "reducetune/cuda/stream_capture.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/space.hpp"

#include <limits>
#include <optional>

namespace reducetune {
namespace {

// The family and preset an untuned device gets: the tunable family's general-purpose preset.
constexpr const char *default_family = "tunable";

// The export's launch rule of a point on this device (block, shared memory, grid, kernels):
// what `reducetune export` tells applications is exactly what the reducer launches. The
// point is the typed one the reducer holds, on the space of this device's limits.
db::launch_rule rule_of(const search_space &s, const point &p) {
  auto r = db::launch_rule_of(s, p);
  if (const auto *why = std::get_if<std::string>(&r))
    throw invalid_configuration("no launch rule: " + *why);
  return std::get<db::launch_rule>(std::move(r));
}

// Grows b to at least `bytes`. `keep`: where an outgrown buffer goes instead of being freed,
// because a captured graph holds its address (nullptr: free it).
void ensure(device_buffer &b, std::size_t bytes, std::vector<device_buffer> *keep) {
  if (b.size() >= bytes)
    return;
  if (keep != nullptr && b.size() > 0)
    keep->push_back(std::move(b));
  b = device_buffer(bytes); // cudaFree waits for the device: a buffer only ever grows
}

} // namespace

unsigned prepared_point::grid(std::uint64_t n) const {
  return checked_grid(db::grid_at(rule, n), n);
}

reducer_device::reducer_device(const reducer_context &context, int ordinal)
    : m_context(context), m_info(query_device(ordinal)),
      m_table(context.table.device_for(m_info.uuid, m_info.name, m_info.arch())) {
  if (m_table == nullptr)
    m_context.fallback("no tuned table for " + std::string{to_string(context.type)} + " " +
                       to_string(context.op) + " on " + m_info.name +
                       ": the default preset answers every size");
}

std::unique_ptr<prepared_point> reducer_device::prepare(const dispatch_rule *rule) {
  const template_library &lib = m_context.jit->library();
  const point_selection &sel = m_context.options.selection;
  auto out = std::make_unique<prepared_point>();
  std::optional<search_space> s;
  std::optional<point> p;
  if (rule != nullptr) {
    try {
      s.emplace(family::load(lib, rule->family), m_context.type, m_context.op, limits_of(m_info));
      // the caller's typed point (for_point), else a stored row's, read once here
      p = rule->typed ? *rule->typed : db::stored_point(*s, rule->variant, rule->launch);
      if (const auto c = s->check(*p); !c)
        throw invalid_configuration(c.reasons());
      if (!s->selected(*p, sel))
        throw invalid_configuration("not accepted by the selection (flagged or nondeterministic)");
      out->choice = {"tuned", m_table->name, rule->bucket_n};
    } catch (const error &e) {
      m_context.fallback("tuned point " + rule->variant + " " + rule->launch + " (n = " +
                         std::to_string(rule->bucket_n) + ") cannot run on " + m_info.name +
                         ": " + e.what() + "; the default preset answers instead");
      p.reset();
    }
  }
  if (!p) {
    s.emplace(family::load(lib, default_family), m_context.type, m_context.op, limits_of(m_info));
    p = s->base(m_context.options.default_preset, sel);
    if (!p)
      throw invalid_configuration("the default preset '" + m_context.options.default_preset +
                                  "' has no valid, selected point for " +
                                  to_string(m_context.type) + " " + to_string(m_context.op));
    out->choice = {"default", "", 0};
  }
  const db::launch_rule r = rule_of(*s, *p);
  out->proto = protocol_from_string(r.protocol);
  out->block = r.block_size;
  out->shared = r.dynamic_shared_bytes;
  out->in_place = r.in_place;
  out->device_launches = r.device_launches;
  out->rule = r;
  auto program = m_context.jit->compile(request_for(s->decl(), p->compile, m_info.arch()));
  out->module = std::make_unique<loaded_module>(*program);
  for (const auto &k : r.kernels) {
    CUfunction f = out->module->function(k.name_expression);
    allow_dynamic_shared(f, out->shared);
    (k.role == "init" ? out->init : k.role == "final" ? out->final : out->pass) = f;
  }
  reducer_choice &c = out->choice;
  c.chosen = *p;
  c.family = s->decl().name;
  c.variant = variant_label(s->decl(), *p);
  c.launch = launch_label(s->decl(), *p);
  c.determinism = to_string(s->determinism_of(*p));
  c.protocol = r.protocol;
  c.block = out->block;
  c.space = std::make_shared<const search_space>(std::move(*s));
  return out;
}

const prepared_point &reducer_device::point_for(std::uint64_t n) {
  if (const auto it = m_by_n.find(n); it != m_by_n.end())
    return *it->second;
  const dispatch_rule *rule = m_table ? dispatch_table::rule_for(*m_table, n) : nullptr;
  const prepared_point *p = nullptr;
  if (const auto it = m_by_rule.find(rule); it != m_by_rule.end()) {
    p = it->second;
  } else {
    m_points.push_back(prepare(rule));
    p = m_by_rule[rule] = m_points.back().get();
  }
  if (m_by_n.size() > 4096) // an application sweeping every n: keep the memo bounded
    m_by_n.clear();
  m_by_n.emplace(n, p);
  return *p;
}

reducer_device::scratch &reducer_device::scratch_for(cudaStream_t stream,
                                                     unsigned long long capture,
                                                     const prepared_point &p,
                                                     const reduction_plan &plan) {
  scratch &s = m_scratch[{stream, capture}];
  std::vector<device_buffer> *keep = capture != 0 ? &m_captured : nullptr;
  const reduction_scratch &need = plan.scratch; // the planner's sizes, as the runner's
  ensure(s.result, need.out, keep);
  ensure(s.partials, need.partials, keep);
  ensure(s.ping, need.ping, keep);
  ensure(s.pong, need.pong, keep);
  ensure(s.copy, need.input_copy, keep);
  if (s.ticket.size() == 0) {
    s.ticket = device_buffer(sizeof(unsigned));
    // Zeroed in stream order (a captured call records it in the graph): a synchronous memset
    // would end a capture. A ticket kernel's last block resets it for the next launch.
    RT_CUDA_CALL(cudaMemsetAsync(s.ticket.data(), 0, sizeof(unsigned), stream));
  }
  if (p.device_launches && m_pending_launch_grid < plan.first_grid) { // cuda/kernel_launch.hpp
    reserve_pending_launches(plan.first_grid);
    m_pending_launch_grid = plan.first_grid;
  }
  return s;
}

reducer_device::call reducer_device::prepare_call(cudaStream_t stream, unsigned long long capture,
                                                  std::uint64_t n) {
  std::optional<relaxed_capture_mode> relaxed;
  if (capture != 0)
    relaxed.emplace();
  const prepared_point &p = point_for(n);
  call c{&p, plan_reduction_steps(
                 p.proto, [&](std::uint64_t m) { return db::grid_at(p.rule, m); }, n,
                 size_of(m_context.type), p.in_place),
         nullptr};
  c.buffers = &scratch_for(stream, capture, p, c.plan);
  return c;
}

} // namespace reducetune
