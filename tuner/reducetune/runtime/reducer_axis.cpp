#include "reducetune/runtime/reducer_axis.hpp"

#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/cuda/stream_capture.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/variant_request.hpp"

#include <algorithm>

namespace reducetune {
namespace {

constexpr const char *axis_family = "axis";

std::string shape_text(const reduction_shape &s) {
  return "(" + std::to_string(s.outer) + ", " + std::to_string(s.r) + ", " +
         std::to_string(s.inner) + ")";
}

} // namespace

axis_device::axis_device(const reducer_context &context, int ordinal)
    : m_context(context), m_info(query_device(ordinal)),
      m_tuned(axis_table_for(context.options.axis_tables,
                             {m_info.uuid, m_info.name, m_info.arch()})) {}

axis_determinism axis_device::level() const { return m_context.options.axis_level; }

bool axis_device::invariant_enough(const search_space &s, const point &p,
                                   const reduction_shape &shape) const {
  // the space's let, as the plan evaluates it (measure/axis_launch.cpp)
  return level() != axis_determinism::batch_invariant || plan_axis(s, p, shape).batch_invariant;
}

std::pair<const axis_entry *, bool> axis_device::entry_for(const reduction_shape &shape) const {
  if (const axis_entry *e = table_entry(m_context.options.axis_table, shape))
    return {e, false};
  if (m_tuned != nullptr)
    if (const axis_entry *e = table_entry(m_tuned->entries, shape))
      return {e, true};
  return {nullptr, false};
}

std::string axis_device::why_of(const axis_entry &entry, bool tuned) const {
  return tuned ? "tuned at " + shape_text(entry.shape) + " on " + m_tuned->name +
                     " (the nearest tuned shape, db/shape_rule.hpp)"
               : "the table's entry at " + shape_text(entry.shape);
}

std::unique_ptr<axis_device::prepared> axis_device::prepare(const axis_entry *entry, bool tuned,
                                                            const reduction_shape &shape) {
  auto out = std::make_unique<prepared>();
  out->space.emplace(family::load(m_context.jit->library(), axis_family), m_context.type,
                     m_context.op, limits_of(m_info));
  const search_space &s = *out->space;
  if (entry != nullptr) {
    try {
      out->p = db::stored_point(s, entry->variant, entry->launch);
      if (const auto c = s.check(*out->p); !c)
        throw invalid_configuration(c.reasons());
      if (!invariant_enough(s, *out->p, shape))
        throw invalid_configuration("it is not batch_invariant (the family's let), and the "
                                    "call asks for batch_invariant");
      out->choice = {tuned ? "tuned" : "table", "", why_of(*entry, tuned)};
    } catch (const error &e) {
      m_context.fallback(std::string(tuned ? "tuned axis point " : "axis table entry ") +
                         entry->variant + " at " +
                         shape_text(entry->shape) + " cannot run on " + m_info.name + ": " +
                         e.what() + "; the built-in rule answers instead");
      return nullptr;
    }
  } else {
    const axis_rule_pick pick = axis_rule(shape, level(), m_context.type);
    // base(): the preset, or the family's first valid one where it is invalid for this type
    out->p = s.base(pick.preset, {false, true});
    if (!out->p || !invariant_enough(s, *out->p, shape))
      throw invalid_configuration("the axis preset '" + pick.preset + "' has no valid " +
                                  to_string(level()) + " point for " +
                                  to_string(m_context.type) + " " + to_string(m_context.op));
    out->choice = {"rule", pick.preset, pick.why};
  }
  out->module = std::make_unique<loaded_module>(
      *m_context.jit->compile(request_for(s.decl(), out->p->compile, m_info.arch())));
  axis_choice &c = out->choice;
  c.family = s.decl().name;
  c.variant = variant_label(s.decl(), *out->p);
  c.launch = launch_label(s.decl(), *out->p);
  c.determinism = to_string(s.determinism_of(*out->p));
  c.level = to_string(level());
  return out;
}

const axis_device::prepared &axis_device::point_for(const reduction_shape &shape) {
  if (const auto [entry, tuned] = entry_for(shape); entry != nullptr) {
    // a point is prepared once for all its shapes; one that fails for a shape (batch_invariant
    // or validity) is refused for every shape, said once, and the rule answers instead
    const std::string key = "table " + entry->variant + " " + entry->launch;
    if (!m_failed.contains(key)) {
      auto &slot = m_points[key];
      if (!slot)
        slot = prepare(entry, tuned, shape);
      if (slot)
        return *slot;
      m_points.erase(key); // said once (fallback), then the rule answers its shapes
      m_failed.insert(key);
    }
  }
  return rule_point(shape);
}

const axis_device::prepared &axis_device::rule_point(const reduction_shape &shape) {
  auto &slot = m_points["rule " + axis_rule(shape, level(), m_context.type).preset];
  if (!slot)
    slot = prepare(nullptr, false, shape);
  return *slot;
}

axis_device::planned axis_device::plan_of(const reduction_shape &shape) {
  const prepared &p = point_for(shape);
  if (p.choice.source == "rule")
    return {&p, plan_axis(*p.space, *p.p, shape)};
  try {
    return {&p, plan_axis(*p.space, *p.p, shape)};
  } catch (const error &e) { // a tuned point this shape makes invalid: the rule answers it
    m_context.fallback("axis point " + p.choice.variant + " cannot reduce " + shape_text(shape) +
                       ": " + e.what() + "; the built-in rule answers this shape instead");
  }
  const prepared &rule = rule_point(shape);
  return {&rule, plan_axis(*rule.space, *rule.p, shape)};
}

const axis_device::planned &axis_device::plan_for(const reduction_shape &shape) {
  const auto key = std::make_tuple(shape.outer, shape.r, shape.inner);
  if (const auto it = m_plans.find(key); it != m_plans.end())
    return it->second;
  planned pl = plan_of(shape);
  pl.kernels = resolve_axis(*pl.point->module, pl.plan);
  if (m_plans.size() > 4096) // an application sweeping shapes: keep the memo bounded
    m_plans.clear();
  return m_plans.emplace(key, std::move(pl)).first->second;
}

void *axis_device::partials_for(cudaStream_t stream, unsigned long long capture,
                                const axis_plan &plan) {
  if (plan.partials_bytes() == 0)
    return nullptr;
  // A ticket plan's partials take the counters' offset (a multiple of 16), so that its counters
  // fall at the counter zone's start: every plan's partials stay in the partials zone.
  const std::uint64_t partials = plan.counters > 0 ? plan.counters_offset() : plan.partials_bytes();
  scratch &sc = m_partials[{stream, capture}];
  if (sc.partials < partials || sc.counters < plan.counters_bytes()) {
    if (capture != 0 && sc.buffer.size() > 0) // a graph recorded earlier in this capture reads it
      m_captured.push_back(std::move(sc.buffer));
    sc.partials = std::max(sc.partials, (partials + 15) / 16 * 16);
    sc.counters = std::max(sc.counters, plan.counters_bytes());
    sc.buffer = device_buffer(sc.partials + sc.counters);
    zero_device_bytes(static_cast<char *>(sc.buffer.data()) + sc.partials, sc.counters);
  }
  char *base = static_cast<char *>(sc.buffer.data());
  return plan.counters > 0 ? base + sc.partials - plan.counters_offset() : base;
}

void axis_device::reduce(const void *in, const reduction_shape &shape, void *out,
                         cudaStream_t stream) {
  std::lock_guard lock(m_mutex);
  const unsigned long long capture = capture_id(stream);
  const planned *pl = nullptr;
  void *partials = nullptr;
  {
    std::optional<relaxed_capture_mode> relaxed; // compile, load, allocate: nothing enqueued
    if (capture != 0)
      relaxed.emplace();
    pl = &plan_for(shape);
    partials = partials_for(stream, capture, pl->plan);
  }
  launch_axis(pl->kernels, pl->plan, in, out, partials, stream);
}

axis_choice axis_device::choice(const reduction_shape &shape) {
  std::lock_guard lock(m_mutex);
  const planned &pl = plan_for(shape);
  axis_choice c = pl.point->choice;
  // one prepared point serves several shapes: this shape's reason
  if (c.source == "rule")
    c.why = axis_rule(shape, level(), m_context.type).why;
  else if (const auto [entry, tuned] = entry_for(shape); entry != nullptr)
    c.why = why_of(*entry, tuned);
  c.batch_invariant = pl.plan.batch_invariant;
  c.split = pl.plan.split;
  c.launches = pl.plan.launches();
  c.grid = pl.plan.grid;
  c.block = pl.plan.block_size;
  c.partials_bytes = pl.plan.partials_bytes();
  return c;
}

} // namespace reducetune
