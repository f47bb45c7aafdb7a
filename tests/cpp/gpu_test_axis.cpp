// On the GPU (issue 26, first step): every preset of the axis family (kernel_templates/axis,
// one or more per strategy) reduces hostile data along an axis correctly, for every element
// type and operator, and its batch_invariant points give a row the same bits whatever the
// number of rows reduced with it.
//
// Shapes: rows (rows, r, 1), columns (1, r, columns) and a middle axis (outer, r, inner) for
// r in {1, 2, 3, 17, 1000, 4097, 2^20}. Each output's row gets one of five patterns by its
// index: small integers (every order exact: a lost or doubled element is caught with
// tolerance 0), cancellation around large values, huge and tiny values, uniform [-1, 1), and
// extremes at the row's middle and last element. Rows and middle-axis inputs start one
// element past an aligned address, so rows are misaligned and r is a multiple of nothing the
// kernels assume. Every output is checked against the host reference of its own row
// (verify/axis_reference: integers exact, floats within the γ bound of n·u·Σ|x| around a
// compensated sum).
//
// The points are launched through measure/axis_launch (the axis ABI: the pass over the
// family's grid at the shape, then the finish kernel for split > 1).
#include "axis_device_problem.hpp"
#include "catch.hpp"
#include "gpu_context.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/axis_reference.hpp"
#include "reducetune/verify/types.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace reducetune;

namespace {

using bytes = std::vector<unsigned char>;

struct gpu_context : rt_test::gpu_context {
  family axis = family::load(lib, "axis");
  compiler c{lib};
};

gpu_context &context() {
  static gpu_context g;
  return g;
}

struct loaded_preset {
  std::string name;
  point p;
  std::unique_ptr<loaded_module> module;
};

// Compiles every point in one batch and loads it; a point that does not compile fails the test
// with its log.
void compile_and_load(std::vector<loaded_preset> &points) {
  gpu_context &g = context();
  std::vector<compile_request> requests;
  for (const auto &lp : points)
    requests.push_back(request_for(g.axis, lp.p.compile, g.limits.arch));
  const auto outcomes = g.c.compile_batch(requests);
  for (std::size_t i = 0; i < points.size(); ++i) {
    INFO(points[i].name << ": " << outcomes[i].error.substr(0, 2000));
    REQUIRE(outcomes[i].program);
    points[i].module = std::make_unique<loaded_module>(*outcomes[i].program);
  }
}

// Every preset of the space that is valid for its type, compiled in one batch and loaded. A
// preset may be refused only for a vector load past 16 bytes (staged_short_rows_vec8 loads 8
// elements: a 2-byte type's preset), never for a 2-byte type itself.
std::vector<loaded_preset> load_presets(const search_space &s) {
  std::vector<loaded_preset> out;
  for (const auto &pp : s.presets()) {
    const check_result valid = s.check(pp.point, pp.launch);
    INFO(pp.name << ": " << valid.reasons());
    if (!valid) {
      REQUIRE(size_of(s.type()) > 2);
      REQUIRE(valid.reasons().find("a vector load is at most 16 bytes") != std::string::npos);
      continue;
    }
    out.push_back({pp.name, point{pp.point, pp.launch}, nullptr});
  }
  compile_and_load(out);
  return out;
}

// splitmix64: random access, so that an element's value is a function of (row, k) alone.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
T integer_element(reduce_op op, unsigned pattern, std::uint64_t h, std::uint64_t k,
                  std::uint64_t r) {
  if (op == reduce_op::prod) // odd factors keep a product modulo 2^bits away from 0
    return pattern == 3 ? static_cast<T>(h | 1u) : (k % 64 == 0 ? T(3) : (h & 1 ? T(1) : T(-1)));
  if (pattern == 3) return static_cast<T>(h); // the whole range: sums wrap
  if (pattern == 4 && k + 1 == r) return std::numeric_limits<T>::max();
  if (pattern == 4 && k == r / 2 && r > 1) return std::numeric_limits<T>::lowest();
  return static_cast<T>(static_cast<std::int64_t>(h % 17) - 8);
}

template <class T>
T float_element(reduce_op op, unsigned pattern, std::uint64_t h, std::uint64_t k, std::uint64_t r) {
  const T u = static_cast<T>(static_cast<double>(h >> 11) * 0x1p-53); // [0, 1)
  const T sign = (h >> 3) & 1 ? T(1) : T(-1);
  if (op == reduce_op::prod) {
    // ±1 with a power of two now and then: every order exact. At most 64 of them (32 twos, 32
    // halves), so that no subset's product leaves 2^±32: a lane may meet every power of one
    // kind (split_rows_vec4, H200 2026-11-26: thread 255 of a 512-thread block read each k of
    // 1024 j, j odd, in rows of 2^20 at offset 1, 2^256 = inf, and its neighbour the halves'
    // 0, inf * 0 = NaN: an order the data allowed to overflow, not a wrong kernel)
    if (pattern == 0)
      return k % 1024 == 0 && k < 64 * 1024 ? ((k / 1024) % 2 ? T(2) : T(0.5)) : sign;
    return sign * (T(1) + (2 * u - 1) * T(0x1p-10));
  }
  switch (pattern) {
  case 0:
    return static_cast<T>(static_cast<int>(h % 17) - 8);
  case 1: // cancellation: ±big pairs around a small remainder
    return (k % 2 ? T(-1) : T(1)) * T(std::numeric_limits<T>::digits > 30 ? 0x1p40 : 0x1p20) +
           (2 * u - 1);
  case 2: { // huge and tiny: r huge values stay below the largest finite value
    const int room = static_cast<int>(std::ceil(std::log2(static_cast<double>(r) + 1))) + 2;
    const T huge = std::ldexp(std::numeric_limits<T>::max(), -room);
    const T tiny = std::numeric_limits<T>::denorm_min() * static_cast<T>(h % 1000);
    return sign * (k % 2 ? static_cast<T>(huge * (T(0.5) + u / 2)) : tiny);
  }
  case 3:
    return 2 * u - 1;
  default:
    if (k + 1 == r) return T(5);
    if (k == r / 2 && r > 1) return T(-5);
    return u;
  }
}

// The element k of the row whose data is seeded by `row`; pattern by the row's number.
template <class T> T element(reduce_op op, std::uint64_t row, std::uint64_t k, std::uint64_t r) {
  const unsigned pattern = static_cast<unsigned>(row % 5);
  const std::uint64_t h = mix(mix(row) ^ k);
  if constexpr (std::numeric_limits<T>::is_integer)
    return integer_element<T>(op, pattern, h, k, r);
  else
    return float_element<T>(op, pattern, h, k, r);
}

// Host input of a shape, `offset` elements past the start of the buffer. same_rows: every
// output's row holds the data of row 3 (uniform [-1, 1): no two summation orders are likely
// to give the same float bits, unlike pattern 0's exact rows), for the batch-invariance cases.
bytes make_input(const problem &p, std::size_t offset, bool same_rows) {
  bytes host((p.elements() + offset) * size_of(p.type));
  visit_dtype(p.type, [&](auto zero) {
    using T = decltype(zero);
    T *in = reinterpret_cast<T *>(host.data()) + offset;
    const reduction_shape &s = p.shape;
    for (std::uint64_t o = 0; o < s.outer; ++o)
      for (std::uint64_t k = 0; k < s.r; ++k)
        for (std::uint64_t i = 0; i < s.inner; ++i)
          in[(o * s.r + k) * s.inner + i] =
              element<T>(p.op, same_rows ? 3 : o * s.inner + i, k, s.r);
  });
  return host;
}

using device_problem = rt_test::axis_device_problem;

std::vector<std::pair<const char *, reduction_shape>> shapes_for(std::uint64_t r) {
  const std::uint64_t budget = 1ull << 20;
  const std::uint64_t many = std::clamp<std::uint64_t>(budget / r, 2, 1000);
  const std::uint64_t columns = std::clamp<std::uint64_t>(budget / r, 2, 1030);
  return {{"rows", {many, r, 1}},
          {"columns", {1, r, columns}},
          {"middle axis", r > 4097 ? reduction_shape{2, r, 3} : reduction_shape{3, r, 5}}};
}

} // namespace

TEST_CASE("Every axis preset reduces rows, columns and a middle axis of hostile data "
          "correctly for every type and operator",
          "[gpu][axis]") {
  const gpu_context &g = context();
  for (const dtype t : all_dtypes)
    for (const reduce_op o : all_ops) {
      const search_space s(g.axis, t, o, g.limits);
      const auto presets = load_presets(s);
      for (const std::uint64_t r : {1ull, 2ull, 3ull, 17ull, 1000ull, 4097ull, 1ull << 20})
        for (const auto &[kind, shape] : shapes_for(r)) {
          const problem p{t, o, shape};
          const std::size_t offset = std::string(kind) == "columns" ? 0 : 1;
          const bytes host = make_input(p, offset, false);
          const axis_reference reference(p, host.data() + offset * size_of(t));
          const device_problem d(p, host, offset);
          for (const auto &lp : presets) {
            INFO(to_label(p) << " " << kind << " offset " << offset << ": " << lp.name << " "
                             << to_label(g.axis, lp.p.compile));
            const bytes got = d.run(s, lp);
            const axis_verdict v = reference.check(got.data());
            INFO(v.summary());
            REQUIRE(v.ok());
            if (std::string(kind) == "rows") // run_to_run: the same bits again
              REQUIRE(d.run(s, lp) == got);
          }
        }
    }
}

TEST_CASE("A seeded sample of axis points beyond the presets reduces every shape kind "
          "correctly",
          "[gpu][axis][sample]") {
  gpu_context &g = context();
  for (const auto &[t, o] :
       {std::pair{dtype::float32, reduce_op::sum}, std::pair{dtype::int64, reduce_op::prod},
        std::pair{dtype::float64, reduce_op::max}}) {
    const search_space s(g.axis, t, o, g.limits);
    std::vector<loaded_preset> points;
    for (const variant &v : s.sample(40))
      points.push_back({to_label(g.axis, v), point{v, default_launch_config(g.axis)}, nullptr});
    compile_and_load(points);
    for (const auto &[shape, offset] : {std::pair{reduction_shape{300, 1000, 1}, std::size_t{1}},
                                        std::pair{reduction_shape{1, 257, 1030}, std::size_t{0}},
                                        std::pair{reduction_shape{3, 4097, 5}, std::size_t{1}},
                                        std::pair{reduction_shape{2, 3, 7}, std::size_t{1}}}) {
      const problem p{t, o, shape};
      const bytes host = make_input(p, offset, false);
      const axis_reference reference(p, host.data() + offset * size_of(t));
      const device_problem d(p, host, offset);
      for (const auto &lp : points) {
        INFO(to_label(p) << " offset " << offset << ": " << lp.name);
        const axis_verdict v = reference.check(d.run(s, lp).data());
        INFO(v.summary());
        REQUIRE(v.ok());
      }
    }
  }
}

TEST_CASE("The axis verifier catches one wrong output among many", "[gpu][axis]") {
  const gpu_context &g = context();
  const search_space s(g.axis, dtype::float32, reduce_op::sum, g.limits);
  const auto presets = load_presets(s);
  const problem p{dtype::float32, reduce_op::sum, {1000, 17, 1}};
  const bytes host = make_input(p, 1, false);
  const device_problem d(p, host, 1);
  const axis_reference reference(p, host.data() + sizeof(float));
  bytes got = d.run(s, presets.front());
  REQUIRE(reference.check(got.data()).ok());
  float x = 0; // output 500 (pattern 0: small integers, tolerance 0) plus one element
  std::memcpy(&x, got.data() + 500 * sizeof(float), sizeof x);
  x += 1;
  std::memcpy(got.data() + 500 * sizeof(float), &x, sizeof x);
  const axis_verdict v = reference.check(got.data());
  REQUIRE(v.failed == 1);
  REQUIRE(v.failures.front().find("output (500, 0)") != std::string::npos);
}

TEST_CASE("A batch_invariant axis point gives a row the same bits for 1, 7 and 4096 rows",
          "[gpu][axis][determinism]") {
  const gpu_context &g = context();
  // Rows of a point that is not batch_invariant (vector loads along misaligned rows) that came
  // out with other bits than the same data alone: proof that the comparison can fail.
  std::uint64_t variant_rows_differ = 0;
  for (const dtype t : {dtype::float32, dtype::float64}) {
    const search_space s(g.axis, t, reduce_op::sum, g.limits);
    const auto presets = load_presets(s);
    for (const std::uint64_t r : {17ull, 1000ull, 4097ull})
      for (const bool columns : {false, true}) {
        // One row's data in every row (or column): every output must have batch 1's bits.
        std::vector<bytes> first(presets.size());
        for (const std::uint64_t rows : {1ull, 7ull, 4096ull}) {
          const problem p{t, reduce_op::sum,
                          columns ? reduction_shape{1, r, rows} : reduction_shape{rows, r, 1}};
          const std::size_t offset = columns ? 0 : 1;
          const bytes host = make_input(p, offset, true);
          const device_problem d(p, host, offset);
          for (std::size_t k = 0; k < presets.size(); ++k) {
            const auto &lp = presets[k];
            const bool invariant = plan_axis(s, lp.p, p.shape).batch_invariant;
            INFO(to_label(p) << " " << lp.name << " " << to_label(g.axis, lp.p.compile));
            const bytes got = d.run(s, lp);
            if (rows == 1) {
              const axis_reference reference(p, host.data() + offset * size_of(t));
              REQUIRE(reference.check(got.data()).ok());
              first[k] = got;
            }
            for (std::uint64_t j = 0; j < rows; ++j) {
              const bool same =
                  std::memcmp(got.data() + j * size_of(t), first[k].data(), size_of(t)) == 0;
              if (invariant)
                REQUIRE(same);
              else
                variant_rows_differ += same ? 0 : 1;
            }
          }
        }
      }
  }
  std::printf("axis: %llu rows of points that are not batch_invariant differ from the same row "
              "reduced alone\n",
              static_cast<unsigned long long>(variant_rows_differ));
  REQUIRE(variant_rows_differ > 0);
}

namespace {

// The outputs of a loaded point launched over `grid` blocks (0: the family's grid at the shape).
bytes run_on_grid(const device_problem &d, const search_space &s, const loaded_preset &lp,
                  std::uint64_t grid) {
  axis_plan plan = plan_axis(s, lp.p, d.p.shape);
  if (grid != 0) plan.grid = grid;
  device_buffer partials(plan.partials_bytes());
  zero_counters(plan, partials.data()); // tile_ticket: zero before its first launch
  RT_CUDA_CALL(cudaMemset(d.out.data(), 0xa5, d.out.size()));
  launch_axis(*lp.module, plan, d.input(), d.out.data(), partials.data(), nullptr);
  RT_CUDA_CALL(cudaDeviceSynchronize());
  bytes result(d.out.size());
  d.out.download(result.data(), result.size());
  return result;
}

// A row strategy's point at unroll 1, 4 and 8, compiled and loaded.
std::vector<loaded_preset> unroll_points(const search_space &s, const char *strategy,
                                         std::int64_t lanes, std::int64_t vec) {
  gpu_context &g = context();
  std::vector<loaded_preset> out;
  for (const std::int64_t unroll : {1, 4, 8}) {
    const point p = s.point_of(
        {{"strategy", std::string(strategy)}, {"lanes", lanes}, {"vec", vec}, {"unroll", unroll}});
    REQUIRE(s.check(p).ok());
    out.push_back({to_label(g.axis, p.compile), p, nullptr});
  }
  compile_and_load(out);
  return out;
}

} // namespace

// Short rows (each lane at most one vector of a row: r <= lanes * vec, r <= lanes where the row
// is strided) take unroll groups of rows per warp step at unroll > 1 (axis_rows.cuh,
// short_rows_by_lanes); unroll 1 reduces them one group per step, the loop every row took
// before. Every row must come out with the same bits either way: rows of 2, 3, 16, 17 and of
// lanes * vec and one more (the path's edge), aligned and one element past (a scalar head and
// tail), a middle axis (strided), over the family's grid and over 1 and 3 blocks (several
// grid-stride steps, the last with fewer rows than a warp takes).
TEST_CASE("Group and warp points give short rows the same bits at unroll 4 and 8 as at unroll 1",
          "[gpu][axis][short_rows]") {
  const gpu_context &g = context();
  for (const auto &[t, o, vec] : {std::tuple{dtype::bfloat16, reduce_op::sum, 8},
                                  std::tuple{dtype::float32, reduce_op::sum, 4},
                                  std::tuple{dtype::float64, reduce_op::max, 2},
                                  std::tuple{dtype::int32, reduce_op::sum, 1}}) {
    const search_space s(g.axis, t, o, g.limits);
    for (const auto &[strategy, lanes] : {std::pair{"group", 2}, std::pair{"group", 4},
                                          std::pair{"group", 16}, std::pair{"warp", 32}}) {
      const auto points = unroll_points(s, strategy, lanes, vec);
      const std::uint64_t edge = static_cast<std::uint64_t>(lanes * vec);
      for (const std::uint64_t r : {std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{16},
                                    std::uint64_t{17}, edge, edge + 1})
        for (const auto &[shape, offset] : {std::pair{reduction_shape{1000, r, 1}, std::size_t{0}},
                                            std::pair{reduction_shape{1000, r, 1}, std::size_t{1}},
                                            std::pair{reduction_shape{3, r, 5}, std::size_t{1}}}) {
          const problem p{t, o, shape};
          const bytes host = make_input(p, offset, false);
          const axis_reference reference(p, host.data() + offset * size_of(t));
          const device_problem d(p, host, offset);
          for (const std::uint64_t grid : {0ull, 1ull, 3ull}) {
            INFO(to_label(p) << " offset " << offset << " grid " << grid << ": " << points[0].name);
            const bytes one = run_on_grid(d, s, points[0], grid);
            const axis_verdict v = reference.check(one.data());
            INFO(v.summary());
            REQUIRE(v.ok());
            for (std::size_t k = 1; k < points.size(); ++k) {
              INFO(points[k].name);
              REQUIRE(run_on_grid(d, s, points[k], grid) == one);
            }
          }
        }
    }
  }
}

// Not run by default (hidden): each preset on float32 shapes of 2^26 elements, rows and
// columns, verified, with its hot median time and bandwidth (bytes read + written) printed.
// What a first look at the hand-picked presets gives; the tuner's protocol is the measure.
TEST_CASE("Axis presets at 2^26 float32 elements: verified, with their bandwidth",
          "[.][gpu][axis][timing]") {
  const gpu_context &g = context();
  const search_space s(g.axis, dtype::float32, reduce_op::sum, g.limits);
  const auto presets = load_presets(s);
  std::printf("%s, peak %.0f GB/s\n", g.device.name.c_str(), g.device.peak_bytes_per_s() / 1e9);
  for (const reduction_shape shape :
       {reduction_shape{1 << 24, 4, 1}, reduction_shape{1 << 21, 32, 1},
        reduction_shape{1 << 16, 1024, 1}, reduction_shape{1 << 10, 1 << 16, 1},
        reduction_shape{16, 1 << 22, 1}, reduction_shape{1, 1 << 24, 4},
        reduction_shape{1, 1 << 20, 64}, reduction_shape{1, 1 << 14, 4096},
        reduction_shape{1, 64, 1 << 20}}) {
    const problem p{dtype::float32, reduce_op::sum, shape};
    const bytes host = make_input(p, 0, false);
    const axis_reference reference(p, host.data());
    const device_problem d(p, host, 0);
    for (const auto &lp : presets) {
      INFO(to_label(p) << " " << lp.name);
      REQUIRE(reference.check(d.run(s, lp).data()).ok());
      const double t = d.median_seconds(s, lp);
      const double gbs = static_cast<double>((p.elements() + p.outputs()) * 4) / t / 1e9;
      std::printf("%-28s %-20s %10.1f us %8.0f GB/s %5.1f %%\n", to_label(p).c_str(),
                  lp.name.c_str(), t * 1e6, gbs, 100 * gbs * 1e9 / g.device.peak_bytes_per_s());
    }
  }
}
