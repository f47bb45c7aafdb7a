// Plain rows of the results database, one struct per table. An id of 0 means "not stored yet".
#pragma once

#include "reducetune/space/point.hpp"
#include "reducetune/space/problem.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reducetune::db {

enum class build_status { ok, failed };
enum class measurement_status { ok, failed, invalid, wrong };

[[nodiscard]] std::string_view to_string(build_status s) noexcept;
[[nodiscard]] std::string_view to_string(measurement_status s) noexcept;
[[nodiscard]] build_status parse_build_status(std::string_view text);
[[nodiscard]] measurement_status parse_measurement_status(std::string_view text);

// rt_devices. The UUID identifies a device; versions are CUDA's integers (12040 = 12.4).
struct device_record {
  std::int64_t id = 0;
  std::string name;
  std::string uuid;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  int bus_width_bits = 0;
  int memory_clock_khz = 0;
  int driver_version = 0;
  int toolkit_version = 0;
  [[nodiscard]] int compute_capability() const noexcept { return cc_major * 10 + cc_minor; }
};

// rt_templates: a template family at one content hash.
struct template_record {
  std::int64_t id = 0;
  std::string family;
  std::string content_hash;
};

// rt_variants: the compile-time point; label is the stable printable label
// (tunable.float32.sum.bs_256...), parameters_json an object of compile-time parameter name ->
// value. flags_json and determinism are what the search space decided for it (point_records.hpp
// fills all four from a point; nothing else writes them).
struct variant_record {
  std::int64_t id = 0;
  std::string family;
  std::string dtype;
  std::string op;
  std::string label;
  std::string parameters_json = "{}";
  std::string flags_json = "[]";       // [{"parameter", "value", "why"}]
  std::string determinism = "unknown"; // run_to_run | none | unknown

  [[nodiscard]] bool flagged() const noexcept { return flags_json != "[]"; }
};

// Which measured points may answer best / the Catalog / the exports: space/point.hpp's
// point_selection (flagged and nondeterministic points left out unless allowed).
using reducetune::point_selection;

// rt_builds: one NVRTC compilation, successful or not; cache_key is the JIT cache's key, so
// this table is also the persistent compile cache (find_build).
struct build_record {
  std::int64_t id = 0;
  std::string cache_key;
  std::string program_key;
  std::string variant_label;
  std::string arch; // "sm_90"
  std::string nvrtc_version;
  std::string options;
  build_status status = build_status::ok;
  std::string log;
  double compile_seconds = 0.0;
  std::vector<std::byte> cubin;
  std::string created_at; // filled by the store
  std::string lowered = "{}"; // JSON {name expression: mangled name} of the cubin's kernels
};

// rt_workloads: what was reduced, a problem (space/problem.hpp) with its data: the shape
// (outer, r, inner) whose middle axis is reduced, `n` holding r (the column's name from before
// shapes: for the whole array (1, n, 1), r is n). Two shapes with one r are two workloads.
struct workload_record {
  std::int64_t id = 0;
  std::string dtype;
  std::string op;
  std::uint64_t n = 0; // the reduced extent r
  std::string data_pattern = "random";
  std::int64_t seed = 0;
  std::uint64_t outer = 1;
  std::uint64_t inner = 1;

  // The workload of problem p (its type and operator as the store spells them); throws
  // invalid_configuration for an extent of 0 (validate).
  [[nodiscard]] static workload_record of(const problem &p, std::string data_pattern,
                                          std::int64_t seed);
};

// The full context of a measurement: two measurements with equal keys are the same point;
// anything that differs (driver, toolkit, template hash, ...) makes a separate row.
struct measurement_key {
  std::int64_t device_id = 0;
  std::string variant_label;
  std::string launch_label; // "ept_16.cap_0"
  workload_record workload; // id ignored; matched by its fields
  std::string template_hash;
  int driver_version = 0;
  int toolkit_version = 0;
};

// Summary statistics of the samples (seconds). The store computes them from the samples it
// stores, so a row can never contradict its own samples.
struct sample_stats {
  std::size_t count = 0;
  double median_s = 0.0;
  double min_s = 0.0;
  double mean_s = 0.0;
  double rel_stddev = 0.0; // sample standard deviation / mean
};
[[nodiscard]] std::optional<sample_stats> summarize(std::span<const double> samples);

// rt_measurements.
struct measurement_record {
  std::int64_t id = 0;
  std::int64_t device_id = 0;
  variant_record variant;
  std::string launch_label;
  std::string launch_parameters_json = "{}"; // {name: value} of the launch config
  workload_record workload;
  std::string template_hash;
  int driver_version = 0;
  int toolkit_version = 0;
  std::optional<std::int64_t> study_id;
  std::vector<double> samples_s;
  std::optional<sample_stats> stats; // filled by the store from samples_s
  std::optional<double> gbps;
  std::optional<double> pct_of_peak;
  std::optional<double> pct_of_ceiling;
  measurement_status status = measurement_status::ok;
  std::string reason;
  std::string created_at; // ISO 8601 UTC; empty: now

  [[nodiscard]] measurement_key key() const;
};

// rt_baselines: CUB or the streaming ceiling for one device and workload.
struct baseline_record {
  std::int64_t id = 0;
  std::int64_t device_id = 0;
  workload_record workload;
  std::string kind; // "cub" | "ceiling"
  int driver_version = 0;
  int toolkit_version = 0;
  std::vector<double> samples_s;
  double median_s = 0.0; // computed by the store from samples_s
  double gbps = 0.0;
};

// rt_studies: one tuning run (the Optuna study of the same name may live in the same file).
struct study_record {
  std::int64_t id = 0;
  std::string name;
  std::optional<std::int64_t> device_id;
  std::string dtype;
  std::string op;
  std::string strategy;
  std::string config_json = "{}";
};

// The answer to "which variant for this device, type, operator and size".
struct best_choice {
  std::int64_t measurement_id = 0;
  std::uint64_t requested_n = 0;
  std::uint64_t bucket_n = 0; // the measured size the answer comes from
  variant_record variant;
  std::string launch_label;
  std::string launch_parameters_json = "{}";
  double median_s = 0.0;
  std::optional<double> gbps;
  std::optional<double> pct_of_peak;
  // The measured shape is (bucket_outer, bucket_n, bucket_inner): (1, bucket_n, 1) for the
  // whole array.
  std::uint64_t bucket_outer = 1;
  std::uint64_t bucket_inner = 1;

  [[nodiscard]] reduction_shape bucket_shape() const noexcept {
    return {bucket_outer, bucket_n, bucket_inner};
  }
};

// Devices of one model: the same name, SM count and memory clock (GPUs of one model share
// their studies when tuned together, and their measurements answer `best` together: two
// H200s of one host are one model, an H200 and an H100 are two). The one definition is the
// list of fields below; both forms of it are built from that list:
// - same_model_sql, an SQL condition on rt_devices rows aliased d1 and d2, for every query
//   that groups by model;
// - device_model_key(), the text that names a model ("NVIDIA H200|132SM|2619000kHz": each
//   field's value and unit, joined by '|'), in the names of the studies the model's GPUs
//   share (Python asks for it: _core.device_model_key). Study names are persisted in Optuna
//   storages and resumed by name, so that text must not change for the fields listed.
struct model_field {
  std::string_view column; // in rt_devices
  std::string_view unit;   // what follows the value in the key
  std::string (*text)(const device_record &);
};

inline constexpr std::array<model_field, 3> model_fields{{
    {"name", "", [](const device_record &d) { return d.name; }},
    {"sm_count", "SM", [](const device_record &d) { return std::to_string(d.sm_count); }},
    {"memory_clock_khz", "kHz",
     [](const device_record &d) { return std::to_string(d.memory_clock_khz); }},
}};

[[nodiscard]] std::string device_model_key(const device_record &d);

namespace detail {
// "d2.C = d1.C AND ..." over model_fields, built at compile time so that same_model_sql stays
// a string literal's equal (a const char * that callers append to).
inline constexpr std::string_view same_model_and = " AND ";
constexpr std::size_t same_model_sql_size() {
  std::size_t size = 1; // the terminating NUL
  for (std::size_t i = 0; i < model_fields.size(); ++i)
    size += (i > 0 ? same_model_and.size() : 0) + 2 * model_fields[i].column.size() + 9;
  return size;
}
constexpr std::array<char, same_model_sql_size()> make_same_model_sql() {
  std::array<char, same_model_sql_size()> out{};
  std::size_t k = 0;
  const auto put = [&](std::string_view text) {
    for (const char c : text)
      out[k++] = c;
  };
  for (std::size_t i = 0; i < model_fields.size(); ++i) {
    if (i > 0)
      put(same_model_and);
    put("d2.");
    put(model_fields[i].column);
    put(" = d1.");
    put(model_fields[i].column);
  }
  return out;
}
inline constexpr auto same_model_sql_text = make_same_model_sql();
} // namespace detail

inline constexpr const char *same_model_sql = detail::same_model_sql_text.data();

// The size rule shared by store::best, the Catalog and the exported header: among the sizes
// measured (sorted ascending, distinct), take the nearest on a log2 scale; a tie goes to the
// larger size. n below the smallest or above the largest takes that end. Returns the index
// into sizes, or nothing when sizes is empty.
[[nodiscard]] std::optional<std::size_t> nearest_bucket(std::span<const std::uint64_t> sizes,
                                                        std::uint64_t n) noexcept;
// The smallest n that selects sizes[i + 1] rather than sizes[i]: ceil(sqrt(a * b)).
[[nodiscard]] std::uint64_t bucket_threshold(std::uint64_t a, std::uint64_t b) noexcept;

} // namespace reducetune::db
