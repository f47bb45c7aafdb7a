#include "reducetune/measure/worker_protocol.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <limits>

namespace reducetune {
namespace {

using json = nlohmann::json;

// ---- reading fields, with errors that name them -------------------------------------------

const json &field(const json &j, const char *name, const std::string &where) {
  if (!j.is_object()) throw protocol_error(where + " must be a JSON object");
  const auto it = j.find(name);
  if (it == j.end()) throw protocol_error(where + ": missing field '" + name + "'");
  return *it;
}

const json *optional_field(const json &j, const char *name, const std::string &where) {
  if (!j.is_object()) throw protocol_error(where + " must be a JSON object");
  const auto it = j.find(name);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string as_string(const json &j, const std::string &what) {
  if (!j.is_string()) throw protocol_error(what + " must be a string, not " + j.dump());
  return j.get<std::string>();
}

std::uint64_t as_unsigned(const json &j, const std::string &what) {
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
    throw protocol_error(what + " must be a non-negative integer, not " + j.dump());
  return j.get<std::uint64_t>();
}

bool as_bool(const json &j, const std::string &what) {
  if (!j.is_boolean()) throw protocol_error(what + " must be true or false, not " + j.dump());
  return j.get<bool>();
}

// Numbers, or the strings "nan", "inf", "-inf" for non-finite values.
json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double as_double(const json &j, const std::string &what) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw protocol_error(what + " must be a number, not " + j.dump());
}

template <class F> auto converted(const std::string &what, F &&f) {
  try {
    return f();
  } catch (const protocol_error &) {
    throw;
  } catch (const error &e) { // an unknown dtype, op or pattern name
    throw protocol_error(what + ": " + e.what());
  }
}

json parse_line(std::string_view line, const char *what) {
  try {
    return json::parse(line);
  } catch (const json::parse_error &e) {
    throw protocol_error(std::string{what} + " is not JSON: " + e.what());
  }
}

// ---- the structs ---------------------------------------------------------------------------

json to_json(const stopping_rule &r) {
  return {{"min_samples", r.min_samples},
          {"max_samples", r.max_samples},
          {"max_noise", number(r.max_noise)},
          {"time_cap_s", number(r.time_cap_s)},
          {"min_time_s", number(r.min_time_s)}};
}

stopping_rule rule_from(const json &j, const std::string &where) {
  stopping_rule r;
  if (const json *v = optional_field(j, "min_samples", where))
    r.min_samples = as_unsigned(*v, where + ".min_samples");
  if (const json *v = optional_field(j, "max_samples", where))
    r.max_samples = as_unsigned(*v, where + ".max_samples");
  if (const json *v = optional_field(j, "max_noise", where))
    r.max_noise = as_double(*v, where + ".max_noise");
  if (const json *v = optional_field(j, "time_cap_s", where))
    r.time_cap_s = as_double(*v, where + ".time_cap_s");
  if (const json *v = optional_field(j, "min_time_s", where))
    r.min_time_s = as_double(*v, where + ".min_time_s");
  return r;
}

json to_json(const evaluate_options &o) {
  return {{"cold_rule", to_json(o.cold_rule)},
          {"hot_rule", to_json(o.hot_rule)},
          {"hot", o.hot},
          {"graph", o.graph},
          {"ceiling_bytes_per_s", number(o.ceiling_bytes_per_s)},
          {"tolerance", {{"depth", o.tolerance.depth}}}};
}

evaluate_options options_from(const json &j) {
  const std::string where = "options";
  evaluate_options o;
  if (const json *v = optional_field(j, "cold_rule", where))
    o.cold_rule = rule_from(*v, "options.cold_rule");
  if (const json *v = optional_field(j, "hot_rule", where))
    o.hot_rule = rule_from(*v, "options.hot_rule");
  if (const json *v = optional_field(j, "hot", where)) o.hot = as_bool(*v, "options.hot");
  if (const json *v = optional_field(j, "graph", where)) o.graph = as_bool(*v, "options.graph");
  if (const json *v = optional_field(j, "ceiling_bytes_per_s", where))
    o.ceiling_bytes_per_s = as_double(*v, "options.ceiling_bytes_per_s");
  if (const json *t = optional_field(j, "tolerance", where))
    if (const json *v = optional_field(*t, "depth", "options.tolerance"))
      o.tolerance.depth = as_unsigned(*v, "options.tolerance.depth");
  return o;
}

json to_json(const workload &w) {
  return {{"dtype", to_string(w.type)},         {"op", to_string(w.op)},
          {"n", w.n},                           {"pattern", to_string(w.pattern)},
          {"seed", w.seed},                     {"offset", w.offset_elements}};
}

workload workload_from(const json &j) {
  const std::string where = "workload";
  workload w;
  w.type = converted("workload.dtype",
                     [&] { return dtype_from_string(as_string(field(j, "dtype", where), "workload.dtype")); });
  w.op = converted("workload.op",
                   [&] { return op_from_string(as_string(field(j, "op", where), "workload.op")); });
  w.n = as_unsigned(field(j, "n", where), "workload.n");
  if (const json *v = optional_field(j, "pattern", where))
    w.pattern = converted("workload.pattern",
                          [&] { return data_pattern_from_string(as_string(*v, "workload.pattern")); });
  if (const json *v = optional_field(j, "seed", where)) w.seed = as_unsigned(*v, "workload.seed");
  if (const json *v = optional_field(j, "offset", where)) {
    const std::uint64_t off = as_unsigned(*v, "workload.offset");
    if (off > std::numeric_limits<unsigned>::max())
      throw protocol_error("workload.offset is too large: " + std::to_string(off));
    w.offset_elements = static_cast<unsigned>(off);
  }
  return w;
}

json to_json(const compiled_program &p) {
  return {{"cubin_base64", base64_encode(p.cubin)}, {"lowered", p.lowered}, {"key", p.key}};
}

compiled_program program_from(const json &j) {
  compiled_program p;
  p.cubin = base64_decode(as_string(field(j, "cubin_base64", "program"), "program.cubin_base64"));
  const json &lowered = field(j, "lowered", "program");
  if (!lowered.is_object()) throw protocol_error("program.lowered must be an object");
  for (const auto &[name, mangled] : lowered.items())
    p.lowered[name] = as_string(mangled, "program.lowered[\"" + name + "\"]");
  if (const json *v = optional_field(j, "key", "program")) p.key = as_string(*v, "program.key");
  return p;
}

json to_json(const sample_statistics &s) {
  return {{"count", s.count},         {"median", number(s.median)}, {"min", number(s.min)},
          {"max", number(s.max)},     {"mean", number(s.mean)},     {"stddev", number(s.stddev)},
          {"rel_stddev", number(s.rel_stddev)}};
}

sample_statistics stats_from(const json &j, const std::string &where) {
  sample_statistics s;
  s.count = as_unsigned(field(j, "count", where), where + ".count");
  s.median = as_double(field(j, "median", where), where + ".median");
  s.min = as_double(field(j, "min", where), where + ".min");
  s.max = as_double(field(j, "max", where), where + ".max");
  s.mean = as_double(field(j, "mean", where), where + ".mean");
  s.stddev = as_double(field(j, "stddev", where), where + ".stddev");
  s.rel_stddev = as_double(field(j, "rel_stddev", where), where + ".rel_stddev");
  return s;
}

json to_json(const timing &t) {
  json samples = json::array();
  for (double s : t.samples_s) samples.push_back(number(s));
  return {{"samples_s", samples}, {"stats", to_json(t.stats)}, {"stopped", to_string(t.stopped)}};
}

timing timing_from(const json &j, const std::string &where) {
  timing t;
  const json &samples = field(j, "samples_s", where);
  if (!samples.is_array()) throw protocol_error(where + ".samples_s must be an array");
  for (const json &s : samples) t.samples_s.push_back(as_double(s, where + ".samples_s[]"));
  t.stats = stats_from(field(j, "stats", where), where + ".stats");
  t.stopped = stop_reason_from_string(as_string(field(j, "stopped", where), where + ".stopped"));
  return t;
}

json to_json(const verdict &v) {
  return {{"ok", v.ok},
          {"expected", v.expected},
          {"got", v.got},
          {"tolerance", number(static_cast<double>(v.tolerance))},
          {"error", number(static_cast<double>(v.error))},
          {"reason", v.reason}};
}

verdict verdict_from(const json &j) {
  const std::string where = "measurement.check";
  verdict v;
  v.ok = as_bool(field(j, "ok", where), where + ".ok");
  v.expected = as_string(field(j, "expected", where), where + ".expected");
  v.got = as_string(field(j, "got", where), where + ".got");
  v.tolerance = as_double(field(j, "tolerance", where), where + ".tolerance");
  v.error = as_double(field(j, "error", where), where + ".error");
  v.reason = as_string(field(j, "reason", where), where + ".reason");
  return v;
}

json to_json(const measurement &m) {
  return {{"cold", to_json(m.cold)},
          {"hot", to_json(m.hot)},
          {"bytes_read", m.bytes_read},
          {"launches", m.launches},
          {"bytes_per_s", number(m.bytes_per_s)},
          {"percent_of_peak", number(m.percent_of_peak)},
          {"percent_of_ceiling", number(m.percent_of_ceiling)},
          {"check", to_json(m.check)}};
}

measurement measurement_from(const json &j) {
  const std::string where = "measurement";
  measurement m;
  m.cold = timing_from(field(j, "cold", where), "measurement.cold");
  // An empty hot timing has no statistics worth checking; keep it empty.
  const json &hot = field(j, "hot", where);
  if (!field(hot, "samples_s", "measurement.hot").empty()) m.hot = timing_from(hot, "measurement.hot");
  m.bytes_read = as_unsigned(field(j, "bytes_read", where), "measurement.bytes_read");
  const std::uint64_t launches = as_unsigned(field(j, "launches", where), "measurement.launches");
  m.launches = static_cast<unsigned>(launches);
  m.bytes_per_s = as_double(field(j, "bytes_per_s", where), "measurement.bytes_per_s");
  m.percent_of_peak = as_double(field(j, "percent_of_peak", where), "measurement.percent_of_peak");
  m.percent_of_ceiling =
      as_double(field(j, "percent_of_ceiling", where), "measurement.percent_of_ceiling");
  m.check = verdict_from(field(j, "check", where));
  return m;
}

json to_json(const device_info &d) {
  return {{"ordinal", d.ordinal},
          {"name", d.name},
          {"uuid", d.uuid},
          {"cc", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"bus_width_bits", d.bus_width_bits},
          {"memory_clock_khz", d.memory_clock_khz},
          {"global_memory_bytes", d.global_memory_bytes},
          {"max_threads_per_block", d.max_threads_per_block},
          {"max_shared_per_block", d.max_shared_per_block},
          {"driver_version", d.driver_version},
          {"runtime_version", d.runtime_version}};
}

int as_int(const json &j, const std::string &what) {
  if (!j.is_number_integer()) throw protocol_error(what + " must be an integer, not " + j.dump());
  return j.get<int>();
}

device_info device_from(const json &j) {
  const std::string where = "device";
  device_info d;
  d.ordinal = as_int(field(j, "ordinal", where), "device.ordinal");
  d.name = as_string(field(j, "name", where), "device.name");
  d.uuid = as_string(field(j, "uuid", where), "device.uuid");
  const std::string cc = as_string(field(j, "cc", where), "device.cc");
  if (std::sscanf(cc.c_str(), "%d.%d", &d.cc_major, &d.cc_minor) != 2)
    throw protocol_error("device.cc must look like \"9.0\", not \"" + cc + "\"");
  d.sm_count = as_int(field(j, "sm_count", where), "device.sm_count");
  d.l2_bytes = as_unsigned(field(j, "l2_bytes", where), "device.l2_bytes");
  d.bus_width_bits = as_int(field(j, "bus_width_bits", where), "device.bus_width_bits");
  d.memory_clock_khz = as_unsigned(field(j, "memory_clock_khz", where), "device.memory_clock_khz");
  d.global_memory_bytes =
      as_unsigned(field(j, "global_memory_bytes", where), "device.global_memory_bytes");
  d.max_threads_per_block =
      as_int(field(j, "max_threads_per_block", where), "device.max_threads_per_block");
  d.max_shared_per_block =
      as_unsigned(field(j, "max_shared_per_block", where), "device.max_shared_per_block");
  d.driver_version = as_int(field(j, "driver_version", where), "device.driver_version");
  d.runtime_version = as_int(field(j, "runtime_version", where), "device.runtime_version");
  return d;
}

constexpr char base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

} // namespace

const char *to_string(reply_failure k) noexcept {
  switch (k) {
  case reply_failure::none: return "none";
  case reply_failure::evaluation: return "evaluation";
  case reply_failure::compile_error: return "compile_error";
  case reply_failure::bad_request: return "bad_request";
  }
  return "?";
}

failure_kind failure_kind_from_string(const std::string &name) {
  for (failure_kind k :
       {failure_kind::invalid_configuration, failure_kind::launch_error, failure_kind::wrong_result,
        failure_kind::worker_crashed, failure_kind::timed_out, failure_kind::device_error})
    if (name == to_string(k)) return k;
  throw protocol_error("unknown failure kind '" + name + "'");
}

stop_reason stop_reason_from_string(const std::string &name) {
  for (stop_reason r : {stop_reason::keep_going, stop_reason::converged, stop_reason::time_cap,
                        stop_reason::max_samples})
    if (name == to_string(r)) return r;
  throw protocol_error("unknown stop reason '" + name + "'");
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(bytes[i + k]); };
    const unsigned v = (b(0) << 16) | (b(1) << 8) | b(2);
    for (int s : {18, 12, 6, 0}) out.push_back(base64_alphabet[(v >> s) & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) v |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out.push_back(base64_alphabet[(v >> 18) & 63]);
    out.push_back(base64_alphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? base64_alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    throw protocol_error("base64 text has a length that is not a multiple of 4 (" +
                         std::to_string(text.size()) + ")");
  std::array<int, 256> value{};
  value.fill(-1);
  for (int k = 0; k < 64; ++k) value[static_cast<unsigned char>(base64_alphabet[k])] = k;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (pad == 1 && text[i + 2] == '=')
      throw protocol_error("base64 padding in the wrong place at offset " + std::to_string(i));
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int d = 0;
      if (k >= 4 - pad) {
        d = 0; // padding
      } else if (d = value[static_cast<unsigned char>(c)]; d < 0) {
        throw protocol_error("base64 text has a bad character at offset " +
                             std::to_string(i + k));
      }
      v = (v << 6) | static_cast<unsigned>(d);
    }
    out.push_back(static_cast<char>((v >> 16) & 255));
    if (pad < 2) out.push_back(static_cast<char>((v >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<char>(v & 255));
  }
  return out;
}

std::string to_json_line(const worker_request &r) {
  json j = {{"id", r.id},
            {"family", r.family},
            {"variant", r.variant_label},
            {"launch", r.launch_label},
            {"workload", to_json(r.load)},
            {"options", to_json(r.options)}};
  if (!r.templates.empty()) j["templates"] = r.templates;
  if (r.program) j["program"] = to_json(*r.program);
  return j.dump();
}

worker_request parse_request(std::string_view line) {
  const json j = parse_line(line, "worker request");
  const std::string where = "worker request";
  worker_request r;
  if (const json *v = optional_field(j, "id", where)) r.id = as_unsigned(*v, "id");
  if (const json *v = optional_field(j, "templates", where)) r.templates = as_string(*v, "templates");
  r.family = as_string(field(j, "family", where), "family");
  r.variant_label = as_string(field(j, "variant", where), "variant");
  r.launch_label = as_string(field(j, "launch", where), "launch");
  r.load = workload_from(field(j, "workload", where));
  if (const json *v = optional_field(j, "options", where)) r.options = options_from(*v);
  if (const json *v = optional_field(j, "program", where)) r.program = program_from(*v);
  return r;
}

std::string to_json_line(const worker_reply &r) {
  json j = {{"id", r.id}, {"variant", r.variant_label}, {"launch", r.launch_label}};
  if (const auto *m = std::get_if<measurement>(&r.result)) {
    j["result"] = "measurement";
    j["measurement"] = to_json(*m);
  } else {
    const auto &f = std::get<failure>(r.result);
    j["result"] = "failure";
    const bool wire_only =
        r.wire_kind == reply_failure::compile_error || r.wire_kind == reply_failure::bad_request;
    j["failure"] = {{"kind", wire_only ? to_string(r.wire_kind) : to_string(f.kind)},
                    {"reason", f.reason}};
  }
  if (r.exits) j["exits"] = true;
  if (r.device) j["device"] = to_json(*r.device);
  j["compile_seconds"] = number(r.compile_seconds);
  j["compiled"] = r.compiled;
  return j.dump();
}

worker_reply parse_reply(std::string_view line) {
  const json j = parse_line(line, "worker reply");
  const std::string where = "worker reply";
  worker_reply r;
  if (const json *v = optional_field(j, "id", where)) r.id = as_unsigned(*v, "id");
  if (const json *v = optional_field(j, "variant", where)) r.variant_label = as_string(*v, "variant");
  if (const json *v = optional_field(j, "launch", where)) r.launch_label = as_string(*v, "launch");
  const std::string result = as_string(field(j, "result", where), "result");
  if (result == "measurement") {
    r.result = measurement_from(field(j, "measurement", where));
  } else if (result == "failure") {
    const json &f = field(j, "failure", where);
    const std::string kind = as_string(field(f, "kind", "failure"), "failure.kind");
    const std::string reason = as_string(field(f, "reason", "failure"), "failure.reason");
    if (kind == "compile_error") {
      r.wire_kind = reply_failure::compile_error;
      r.result = failure{failure_kind::invalid_configuration, reason};
    } else if (kind == "bad_request") {
      r.wire_kind = reply_failure::bad_request;
      r.result = failure{failure_kind::invalid_configuration, reason};
    } else {
      r.wire_kind = reply_failure::evaluation;
      r.result = failure{failure_kind_from_string(kind), reason};
    }
  } else {
    throw protocol_error("result must be \"measurement\" or \"failure\", not \"" + result + "\"");
  }
  if (const json *v = optional_field(j, "exits", where)) r.exits = as_bool(*v, "exits");
  if (const json *v = optional_field(j, "device", where)) r.device = device_from(*v);
  if (const json *v = optional_field(j, "compile_seconds", where))
    r.compile_seconds = as_double(*v, "compile_seconds");
  if (const json *v = optional_field(j, "compiled", where)) r.compiled = as_bool(*v, "compiled");
  return r;
}

worker_reply bad_request_reply(std::uint64_t id, const std::string &reason) {
  worker_reply r;
  r.id = id;
  r.wire_kind = reply_failure::bad_request;
  r.result = failure{failure_kind::invalid_configuration, reason};
  return r;
}

} // namespace reducetune
