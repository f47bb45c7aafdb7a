#include "reducetune/db/records.hpp"

#include <algorithm>
#include <cmath>

#include "reducetune/errors.hpp"
#include "reducetune/space/name_table.hpp"

namespace reducetune::db {

namespace {
// GCC and Clang both have it; -Wpedantic is told it is on purpose.
__extension__ typedef unsigned __int128 u128;
} // namespace

std::string_view to_string(build_status s) noexcept {
  return s == build_status::ok ? "ok" : "failed";
}

namespace {
constexpr name_table<measurement_status, 4> measurement_status_names = {
    {{measurement_status::ok, "ok"},
     {measurement_status::failed, "failed"},
     {measurement_status::invalid, "invalid"},
     {measurement_status::wrong, "wrong"}}};
} // namespace

std::string_view to_string(measurement_status s) noexcept {
  return name_of(measurement_status_names, s, "failed");
}

workload_record workload_record::of(const problem &p, std::string data_pattern,
                                    std::int64_t seed) {
  validate(p);
  workload_record w;
  w.dtype = to_string(p.type);
  w.op = to_string(p.op);
  w.n = p.shape.r;
  w.data_pattern = std::move(data_pattern);
  w.seed = seed;
  w.outer = p.shape.outer;
  w.inner = p.shape.inner;
  return w;
}

build_status parse_build_status(std::string_view text) {
  if (text == "ok")
    return build_status::ok;
  if (text == "failed")
    return build_status::failed;
  throw store_error("unknown build status '" + std::string(text) + "'");
}

measurement_status parse_measurement_status(std::string_view text) {
  if (const auto s = value_named(measurement_status_names, text))
    return *s;
  throw store_error("unknown measurement status '" + std::string(text) + "'");
}

std::optional<sample_stats> summarize(std::span<const double> samples) {
  if (samples.empty())
    return std::nullopt;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  sample_stats s;
  s.count = sorted.size();
  const std::size_t mid = sorted.size() / 2;
  s.median_s = sorted.size() % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  s.min_s = sorted.front();
  double sum = 0.0;
  for (double x : sorted)
    sum += x;
  s.mean_s = sum / static_cast<double>(sorted.size());
  if (sorted.size() > 1 && s.mean_s != 0.0) {
    double sq = 0.0;
    for (double x : sorted)
      sq += (x - s.mean_s) * (x - s.mean_s);
    s.rel_stddev = std::sqrt(sq / static_cast<double>(sorted.size() - 1)) / s.mean_s;
  }
  return s;
}

std::string device_model_key(const device_record &d) {
  std::string key;
  for (std::size_t i = 0; i < model_fields.size(); ++i) {
    if (i > 0)
      key += '|';
    key += model_fields[i].text(d);
    key += model_fields[i].unit;
  }
  return key;
}

measurement_key measurement_record::key() const {
  return {device_id,     variant.label,  launch_label,   workload,
          template_hash, driver_version, toolkit_version};
}

std::uint64_t bucket_threshold(std::uint64_t a, std::uint64_t b) noexcept {
  // n selects b when log2(n) - log2(a) >= log2(b) - log2(n), i.e. n * n >= a * b.
  const u128 product = static_cast<u128>(a) * b;
  auto root = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(product)));
  while (static_cast<u128>(root) * root > product)
    --root;
  while (static_cast<u128>(root + 1) * (root + 1) <= product)
    ++root;
  return static_cast<u128>(root) * root == product ? root : root + 1;
}

std::optional<std::size_t> nearest_bucket(std::span<const std::uint64_t> sizes,
                                          std::uint64_t n) noexcept {
  if (sizes.empty())
    return std::nullopt;
  const auto it = std::lower_bound(sizes.begin(), sizes.end(), n);
  if (it == sizes.begin())
    return 0;
  if (it == sizes.end())
    return sizes.size() - 1;
  const auto hi = static_cast<std::size_t>(it - sizes.begin());
  return n >= bucket_threshold(sizes[hi - 1], sizes[hi]) ? hi : hi - 1;
}

} // namespace reducetune::db
