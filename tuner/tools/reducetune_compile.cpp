// reducetune-compile: compiles presets and points of the search space with NVRTC, no GPU
// needed, and prints the compile throughput cold and cached.
//
//   reducetune-compile --arch sm_90 [--all | --sample N] [--family NAME] [--dtype T] [--op O]
//                      [--threads K] [--batch B] [--templates DIR] [--db PATH]
//                      [--list-failures]
//
// --sample N (default 500) compiles a seeded sample of N valid tunable points spread over
// every dtype x op, plus every preset of every family; --all compiles every valid point.
// Exit status: 0 when every requested point compiled, 1 when one failed, 2 for bad usage.
#include "reducetune/errors.hpp"
#include "reducetune/jit/compile_cache.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/space_jobs.hpp"
#include "reducetune/jit/store_cache.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace reducetune;

namespace {

struct options {
  std::string arch = "sm_90";
  job_selection select;
  batch_options batch;
  std::string templates;
  std::string database; // persistent compile cache (rt_builds); "" = memory only
  bool list_failures = false;
};

[[noreturn]] void usage(const std::string &problem) {
  std::fprintf(stderr,
               "reducetune-compile: %s\n"
               "usage: reducetune-compile --arch sm_90 [--all | --sample N] [--family NAME]\n"
               "         [--dtype int32|int64|float32|float64] [--op sum|min|max|prod]\n"
               "         [--threads K] [--batch B] [--templates DIR] [--db PATH]\n"
               "         [--list-failures]\n",
               problem.c_str());
  std::exit(2);
}

std::size_t to_count(const std::string &flag, const char *text) {
  char *end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (!end || *end || v < 0)
    usage(flag + " needs a non-negative integer, not '" + text + "'");
  return static_cast<std::size_t>(v);
}

options parse(int argc, char **argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> const char * {
      if (i + 1 >= argc)
        usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--arch")
      o.arch = next();
    else if (a == "--all")
      o.select.all = true;
    else if (a == "--sample")
      o.select.sample = to_count(a, next());
    else if (a == "--family")
      o.select.family = next();
    else if (a == "--dtype")
      o.select.dtypes = {dtype_from_string(next())};
    else if (a == "--op")
      o.select.ops = {op_from_string(next())};
    else if (a == "--threads")
      o.batch.threads = static_cast<unsigned>(to_count(a, next()));
    else if (a == "--batch")
      o.batch.max_requests_per_program = static_cast<unsigned>(to_count(a, next()));
    else if (a == "--templates")
      o.templates = next();
    else if (a == "--db")
      o.database = next();
    else if (a == "--list-failures")
      o.list_failures = true;
    else
      usage("unknown argument '" + a + "'");
  }
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv) try {
  const options o = parse(argc, argv);
  const device_limits limits = device_limits::for_arch(o.arch);
  const template_library lib = o.templates.empty() ? template_library::from_environment()
                                                   : template_library::embedded_with(o.templates);
  const std::vector<compile_job> jobs = select_jobs(lib, limits, o.select);
  std::vector<compile_request> requests;
  for (const auto &j : jobs)
    requests.push_back(j.request);

  // With --db, programs persist in the results database: a second run (another process)
  // loads them instead of compiling.
  compiler c(lib, o.database.empty()
                      ? nullptr
                      : std::make_shared<compile_cache>(
                            std::make_shared<store_cache_backend>(o.database)));
  const unsigned threads = o.batch.threads ? o.batch.threads : std::max(1u, std::thread::hardware_concurrency());
  std::printf("compiling %zu variants for %s (templates: %s, %u threads, batch %u)\n",
              requests.size(), o.arch.c_str(), lib.origin().c_str(), threads,
              o.batch.max_requests_per_program);

  auto start = std::chrono::steady_clock::now();
  const auto cold = c.compile_batch(requests, o.batch);
  const double cold_s = seconds_since(start);
  std::size_t failed = 0;
  for (std::size_t i = 0; i < cold.size(); ++i) {
    if (cold[i].program)
      continue;
    ++failed;
    if (o.list_failures || failed <= 3)
      std::printf("FAILED %s\n%s\n", jobs[i].label.c_str(), cold[i].error.c_str());
  }
  std::printf("cold:   %zu variants in %.2f s = %.1f variants/s (%zu failed)\n", requests.size(),
              cold_s, static_cast<double>(requests.size()) / cold_s, failed);

  start = std::chrono::steady_clock::now();
  const auto cached = c.compile_batch(requests, o.batch);
  const double cached_s = seconds_since(start);
  std::size_t hits = 0;
  for (const auto &r : cached)
    hits += r.cached ? 1 : 0;
  std::printf("cached: %zu variants in %.4f s = %.0f variants/s, %.3f ms per hit (%zu hits)\n",
              requests.size(), cached_s, static_cast<double>(requests.size()) / cached_s,
              1e3 * cached_s / static_cast<double>(std::max<std::size_t>(1, requests.size())),
              hits);
  return failed == 0 ? 0 : 1;
} catch (const reducetune::error &e) {
  std::fprintf(stderr, "reducetune-compile: %s\n", e.what());
  return 2;
}
