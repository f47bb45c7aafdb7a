// Reduces a device buffer with reducetune::reducer and checks it against the host.
//
//   reducetune-example [--db results.db] [--dtype float32] [--op sum] [--n 1000003]
//
// With --db, the fastest deterministic point tuned for this GPU at each size (reducetune tune
// writes the file); without, the untuned default preset. Exit codes: 0 the result matches,
// 1 it does not, 2 a usage or reducetune error, 77 no CUDA GPU (the tests' "skipped").
#include "reducetune/errors.hpp"
#include "reducetune/runtime/reducer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

struct args {
  std::string db;
  reducetune::dtype type = reducetune::dtype::float32;
  reducetune::reduce_op op = reducetune::reduce_op::sum;
  std::uint64_t n = 1'000'003; // odd: the tail of a vectorised load is exercised too
};

args parse(int argc, char **argv) {
  args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--db")
      a.db = value;
    else if (key == "--dtype")
      a.type = reducetune::dtype_from_string(value);
    else if (key == "--op")
      a.op = reducetune::op_from_string(value);
    else if (key == "--n")
      a.n = std::stoull(value);
    else
      throw reducetune::invalid_configuration("unknown option " + key);
  }
  if (argc % 2 == 0) throw reducetune::invalid_configuration("every option takes a value");
  // A product of random data under- or overflows: its check would prove nothing.
  if (a.op == reducetune::reduce_op::prod)
    throw reducetune::invalid_configuration("the example checks sum, min and max");
  return a;
}

void check_cuda(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

// Small values, so that an integer sum of a few million stays in range; floats in [-1, 1).
template <class T> std::vector<T> make_input(std::uint64_t n) {
  std::mt19937_64 rng(42);
  std::vector<T> x(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> d(-100, 100);
    for (auto &v : x) v = static_cast<T>(d(rng));
  } else {
    std::uniform_real_distribution<T> d(-1, 1);
    for (auto &v : x) v = d(rng);
  }
  return x;
}

// The exact answer for integers and min/max; for a float sum, a long double sum and the bound
// any summation order stays within, (n - 1)·u·Σ|x| (first order; see verify/tolerance.hpp).
template <class T>
std::pair<long double, long double> reference(const std::vector<T> &x, reducetune::reduce_op op) {
  if (op == reducetune::reduce_op::min) return {*std::min_element(x.begin(), x.end()), 0};
  if (op == reducetune::reduce_op::max) return {*std::max_element(x.begin(), x.end()), 0};
  if constexpr (std::is_integral_v<T>) {
    std::int64_t s = 0;
    for (T v : x) s += v;
    return {static_cast<T>(s), 0}; // wraps as the GPU's T does
  } else {
    long double s = 0, abs_sum = 0;
    for (T v : x) s += v, abs_sum += std::fabs(v);
    const long double u = std::numeric_limits<T>::epsilon() / 2.0L;
    return {s, static_cast<long double>(x.size() - 1) * u * abs_sum};
  }
}

template <class T> bool run(reducetune::reducer &r, std::uint64_t n) {
  const std::vector<T> host = make_input<T>(n);
  void *d_in = nullptr;
  check_cuda(cudaMalloc(&d_in, n * sizeof(T)), "cudaMalloc");
  check_cuda(cudaMemcpy(d_in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  T result{};
  r.reduce_to_host(d_in, n, &result);
  check_cuda(cudaFree(d_in), "cudaFree");

  const auto c = r.choice(n);
  std::printf("point:     %s %s %s (determinism: %s)\n", c.family.c_str(), c.variant.c_str(),
              c.launch.c_str(), c.determinism.c_str());
  if (c.source == "tuned")
    std::printf("from:      the table of '%s', measured at n=%llu\n", c.device_name.c_str(),
                static_cast<unsigned long long>(c.bucket_n));
  else
    std::printf("from:      the default preset (no tuned point for this GPU and n)\n");
  std::printf("launch:    %u kernel(s), grid %u, block %u, finish %s\n", c.launches, c.grid,
              c.block, c.protocol.c_str());
  const auto [ref, tol] = reference(host, r.op());
  const long double err = std::fabs(static_cast<long double>(result) - ref);
  std::printf("result:    %.17Lg\nreference: %.17Lg (tolerance %.3Lg, error %.3Lg)\n",
              static_cast<long double>(result), ref, tol, err);
  return err <= tol;
}

} // namespace

int main(int argc, char **argv) try {
  const args a = parse(argc, argv);
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "reducetune-example: no CUDA GPU (%s)\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  auto r = a.db.empty() ? reducetune::reducer::untuned(a.type, a.op)
                        : reducetune::reducer::from_database(a.db, a.type, a.op);
  std::printf("reduce:    %s %s of n=%llu\n", reducetune::to_string(a.type),
              reducetune::to_string(a.op), static_cast<unsigned long long>(a.n));
  bool ok = false;
  switch (a.type) {
  case reducetune::dtype::int32:
    ok = run<std::int32_t>(r, a.n);
    break;
  case reducetune::dtype::int64:
    ok = run<std::int64_t>(r, a.n);
    break;
  case reducetune::dtype::float32:
    ok = run<float>(r, a.n);
    break;
  case reducetune::dtype::float64:
    ok = run<double>(r, a.n);
    break;
  }
  std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
} catch (const std::exception &e) {
  std::fprintf(stderr, "reducetune-example: %s\n", e.what());
  return 2;
}
