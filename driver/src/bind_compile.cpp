// NVRTC compilation from Python: points of one space, the same selection as
// reducetune-compile (presets + a seeded sample or every valid point), or the variants a
// study is about to measure (precompile, into the cache that evaluate uses). No GPU needed.
#include "common.hpp"
#include "py_point.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compile_ahead.hpp"
#include "reducetune/jit/compile_cache.hpp"
#include "reducetune/jit/folder_cache.hpp"
#include "reducetune/jit/space_jobs.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/device_limits.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/space.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

namespace rtpy {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

nb::dict compile_jobs(const std::string &arch, bool all, std::size_t sample,
                      const std::string &family, const std::vector<std::string> &dtypes,
                      const std::vector<std::string> &ops, std::uint64_t seed, unsigned threads,
                      unsigned batch, bool cached_pass) {
  rt::job_selection sel;
  sel.all = all;
  sel.sample = sample;
  sel.seed = seed;
  sel.family = family;
  if (!dtypes.empty()) {
    sel.dtypes.clear();
    for (const auto &t : dtypes)
      sel.dtypes.push_back(rt::dtype_from_string(t));
  }
  if (!ops.empty()) {
    sel.ops.clear();
    for (const auto &o : ops)
      sel.ops.push_back(rt::op_from_string(o));
  }
  rt::batch_options opts;
  opts.threads = threads;
  if (batch)
    opts.max_requests_per_program = batch;
  const auto limits = rt::device_limits::for_arch(arch);
  const auto jobs = rt::select_jobs(library(), limits, sel);
  std::vector<rt::compile_request> requests;
  for (const auto &j : jobs)
    requests.push_back(j.request);

  std::vector<std::pair<std::string, std::string>> failures;
  double cold_s = 0, cached_s = 0;
  std::size_t hits = 0;
  {
    nb::gil_scoped_release release;
    rt::compiler c(library()); // a fresh cache: the cold pass really compiles
    auto start = std::chrono::steady_clock::now();
    const auto cold = c.compile_batch(requests, opts);
    cold_s = seconds_since(start);
    for (std::size_t i = 0; i < cold.size(); ++i)
      if (!cold[i].program)
        failures.emplace_back(jobs[i].label, cold[i].error);
    if (cached_pass) {
      start = std::chrono::steady_clock::now();
      for (const auto &r : c.compile_batch(requests, opts))
        hits += r.cached ? 1 : 0;
      cached_s = seconds_since(start);
    }
  }
  nb::dict d;
  d["arch"] = arch;
  d["count"] = requests.size();
  d["cold_s"] = cold_s;
  d["cached_s"] = cached_s;
  d["cached_hits"] = hits;
  d["failures"] = failures;
  d["templates"] = library().origin();
  return d;
}

// The requests of the jobs' distinct variants, first occurrences in order, with their labels.
std::pair<std::vector<std::string>, std::vector<rt::compile_request>>
distinct_requests(const std::vector<variant_job> &jobs, const std::string &arch) {
  const int cc = rt::device_limits::for_arch(arch).arch;
  std::vector<std::string> labels;
  std::vector<rt::compile_request> requests;
  std::set<std::string> seen;
  for (const auto &job : jobs) {
    std::string label = rt::to_label(*job.family, job.v);
    if (!seen.insert(label).second)
      continue;
    labels.push_back(std::move(label));
    requests.push_back(rt::request_for(*job.family, job.v, cc));
  }
  return {std::move(labels), std::move(requests)};
}

// The GPU workers of one `tune --devices` run share what they compile through `folder`
// (evaluate/gpu.py share_compiles; none in a one-GPU run: ""): the process-wide compiler's
// cache stores each program there and loads what another worker stored (jit/folder_cache.hpp).
// The same folder again changes nothing.
void share_programs(const std::string &folder) {
  if (folder.empty())
    return;
  auto &cache = shared_compiler().cache();
  const auto *now = dynamic_cast<const rt::folder_cache_backend *>(cache.backend().get());
  if (!now || now->folder() != folder)
    cache.set_backend(std::make_shared<rt::folder_cache_backend>(folder));
}

} // namespace

// Compiles the variants into the process-wide compiler's memory cache, so that evaluate()
// finds them there instead of compiling each one alone, on one thread, when first measured.
// A variant that fails is not cached: evaluating it compiles it again and reports the failure
// as that point's (the run goes on). Counts and failures are per distinct variant, reported
// by its label.
nb::dict precompile_variants(const std::vector<variant_job> &jobs, const std::string &arch,
                             unsigned threads) {
  auto [labels, requests] = distinct_requests(jobs, arch);
  rt::batch_options opts;
  opts.threads = threads;
  // A few variants (a time-limited run's first unit, issue 25) spread over the threads, not one
  // program on one thread: the first point waits for this batch. A large batch: 24 a program.
  const unsigned workers = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  opts.max_requests_per_program = static_cast<unsigned>(std::clamp<std::size_t>(
      (requests.size() + workers - 1) / workers, 1, opts.max_requests_per_program));
  std::vector<rt::compile_outcome> outcomes;
  double seconds = 0;
  {
    nb::gil_scoped_release release;
    const auto start = std::chrono::steady_clock::now();
    outcomes = shared_compiler().compile_batch(requests, opts);
    seconds = seconds_since(start);
  }
  std::size_t compiled = 0, cached = 0;
  nb::dict failures;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].program)
      failures[nb::str(labels[i].c_str())] = outcomes[i].error;
    else if (outcomes[i].cached)
      ++cached;
    else
      ++compiled;
  }
  nb::dict d;
  d["requested"] = labels.size();
  d["compiled"] = compiled;
  d["cached"] = cached;
  d["failed"] = failures.size();
  d["failures"] = failures;
  d["seconds"] = seconds;
  d["threads"] = workers;
  return d;
}

namespace {

// The variants of typed points: Points, or their plain dicts (Point.to_dict()).
std::vector<variant_job> jobs_of(const nb::list &points) {
  std::vector<variant_job> jobs;
  for (const nb::handle h : points) {
    if (nb::isinstance<py_point>(h)) {
      const auto &pt = nb::cast<const py_point &>(h);
      jobs.push_back({&pt.family(), pt.p.compile});
    } else {
      if (!nb::isinstance<nb::dict>(h))
        throw rt::invalid_configuration("precompile(points) takes Points or Point.to_dict()s, "
                                        "not " + nb::cast<std::string>(nb::str(h.type())));
      const plain_point pt = point_of_dict(nb::borrow<nb::dict>(h));
      jobs.push_back({pt.family, pt.p.compile});
    }
  }
  return jobs;
}

nb::dict counts_dict(const rt::ahead_counts &n) {
  nb::dict d;
  const std::pair<const char *, std::size_t> counts[] = {
      {"queued", n.queued}, {"waiting", n.waiting}, {"compiled", n.compiled},
      {"skipped", n.skipped}, {"loaded", n.loaded}, {"failed", n.failed},
      {"dropped", n.dropped},
      {"threads", n.threads}};
  for (const auto &[name, count] : counts)
    d[name] = count;
  d["busy_s"] = n.busy_s;
  return d;
}

// Queues the points' distinct variants, in order, for the background threads (replacing what
// still waits; None: leaves the queue as it is) and returns at once: the counts so far, this
// queue included. threads == 0: compile_ahead::default_threads(workers), the GPU workers of
// this run on this host.
nb::dict compile_ahead(const std::optional<nb::list> &points, const std::string &arch,
                       unsigned threads, unsigned workers, const std::string &shared_dir) {
  share_programs(shared_dir);
  auto &ahead =
      shared_compile_ahead(threads ? threads : rt::compile_ahead::default_threads(workers));
  // the workers sharing a folder split the queue between them (its programs' size)
  if (points)
    ahead.queue(distinct_requests(jobs_of(*points), arch).second,
                shared_dir.empty() ? 1u : std::max(1u, workers));
  return counts_dict(ahead.counts());
}

// One point per distinct variant of the space's selected valid points, in enumeration order:
// each valid variant with its first launch config that makes a valid, selected point (the
// first of that variant in points()). What a run's studies may compile, found without
// enumerating every point: the README's 12 workloads have 595,728 points for 9,456 variants,
// 5.9-8.5 s as Python objects and 4.4 s in C++ on the build machine.
std::vector<py_point> variant_points(const py_space &s, bool allow_flagged,
                                     bool nondeterministic) {
  const rt::search_space &space = *s.space;
  const rt::point_selection selection{allow_flagged, !nondeterministic};
  std::vector<py_point> out;
  for (auto &v : space.valid_points()) {
    for (std::uint64_t i = 0; i < space.launch_size(); ++i) {
      rt::point p{v, space.launch_point(i)};
      if (space.check(p.compile, p.launch) && space.selected(p, selection)) {
        out.push_back({s.space, std::move(p)});
        break;
      }
    }
  }
  return out;
}

} // namespace

void bind_compile(nb::module_ &m) {
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { stop_compile_ahead(); }));
  m.def("compile_jobs", &compile_jobs, nb::arg("arch") = "sm_90", nb::arg("all") = false,
        nb::arg("sample") = 500, nb::arg("family") = "",
        nb::arg("dtypes") = std::vector<std::string>{}, nb::arg("ops") = std::vector<std::string>{},
        nb::arg("seed") = rt::search_space::default_seed, nb::arg("threads") = 0u,
        nb::arg("batch") = 0u, nb::arg("cached_pass") = true,
        "Compiles presets and a seeded sample (or all valid points); timings and failures.");

  m.def(
      "compile_points",
      [](const std::string &family, const std::string &dtype, const std::string &op, int arch,
         const std::vector<params> &points) {
        const rt::family &f = family_named(family);
        const auto t = rt::dtype_from_string(dtype);
        const auto o = rt::op_from_string(op);
        std::vector<rt::compile_request> requests;
        std::vector<std::string> labels;
        for (const auto &p : points) {
          const auto v = to_variant(f, t, o, p);
          labels.push_back(rt::to_label(f, v));
          requests.push_back(rt::request_for(f, v, arch));
        }
        std::vector<rt::compile_outcome> outcomes;
        {
          nb::gil_scoped_release release;
          outcomes = shared_compiler().compile_batch(requests);
        }
        nb::list out;
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
          nb::dict d;
          d["label"] = labels[i];
          d["ok"] = static_cast<bool>(outcomes[i].program);
          d["error"] = outcomes[i].error;
          d["cached"] = outcomes[i].cached;
          d["compile_seconds"] =
              outcomes[i].program ? outcomes[i].program->compile_seconds : 0.0;
          out.append(d);
        }
        return out;
      },
      nb::arg("family"), nb::arg("dtype"), nb::arg("op"), nb::arg("arch"), nb::arg("points"),
      "Compiles points of one space in a batch; failures are data (ok=False, error).");

  m.def(
      "precompile",
      [](const nb::list &points, const std::string &arch, unsigned threads,
         const std::string &shared_dir) {
        share_programs(shared_dir);
        return precompile_variants(jobs_of(points), arch, threads);
      },
      nb::arg("points"), nb::arg("arch") = "sm_90", nb::arg("threads") = 0u,
      nb::arg("shared_dir") = "",
      "Compiles the points' variants (Points or Point.to_dict()s) in parallel into the cache "
      "that evaluate() uses: {requested, compiled, cached, failed, failures: {variant label: "
      "error}, seconds, threads}. shared_dir: the folder the GPU workers of one run share "
      "their programs through (loaded there, stored there).");

  m.def("compile_ahead", &compile_ahead, nb::arg("points").none(), nb::arg("arch") = "sm_90",
        nb::arg("threads") = 0u, nb::arg("workers") = 1u, nb::arg("shared_dir") = "",
        "Queues the points' variants (Points or Point.to_dict()s) for background threads that "
        "compile them into the cache evaluate() uses, replacing what still waits, and returns "
        "at once: {queued, waiting, compiled, skipped, loaded, failed, dropped, busy_s, "
        "threads} so far (loaded: another GPU worker's, from shared_dir). An empty list drops "
        "what waits; None only reports. threads (0: one per hardware thread but one, or with "
        "workers GPU workers on the host each its share, at most 16) counts at the first call "
        "only. shared_dir: the folder the GPU workers of one run share their programs through.");
  m.def("variant_points", &variant_points, nb::arg("space"), nb::arg("allow_flagged") = false,
        nb::arg("nondeterministic") = false,
        "One point per distinct variant of the space's selected valid points, in enumeration "
        "order: what precompile() and compile_ahead() need of a space.");
}

} // namespace rtpy
