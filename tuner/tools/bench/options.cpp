// Parsing reducetune-bench's command line into options (options.hpp): comma lists for dtypes,
// --only and --racy-sizes, lo:hi[:step] (log2) for --sizes; anything unknown or malformed
// prints the usage and exits with 2.
#include "bench/options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace reducetune::bench {

namespace {

[[noreturn]] void usage(const std::string &problem) {
  std::fprintf(stderr,
               "reducetune-bench: %s\n"
               "usage: reducetune-bench [--dtype float32,int32] [--op sum] [--sizes 10:30:2]\n"
               "         [--repeat N] [--no-graph] [--time-cap S] [--min-time S] [--slow-max-log2 K]\n"
               "         [--only NAME,...]\n"
               "         [--out FILE.md] [--json FILE]\n"
               "       reducetune-bench --racy-trials N [--racy-sizes 10,16,20,24] [--dtype ...]\n"
               "         [--only NAME,...] [--out FILE.md]\n",
               problem.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, sep);)
    if (!p.empty()) parts.push_back(p);
  return parts;
}

int to_int(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end) usage(flag + " needs an integer, not '" + text + "'");
  return static_cast<int>(v);
}

} // namespace

options parse(int argc, char **argv) {
  options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string{argv[i]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--dtype") {
      o.dtypes.clear();
      for (const auto &t : split(next(), ',')) o.dtypes.push_back(dtype_from_string(t));
    } else if (a == "--op") {
      o.op = op_from_string(next());
    } else if (a == "--sizes") {
      const auto parts = split(next(), ':');
      if (parts.size() < 2 || parts.size() > 3) usage("--sizes needs lo:hi[:step] (log2)");
      o.lo = to_int(a, parts[0]);
      o.hi = to_int(a, parts[1]);
      o.step = parts.size() == 3 ? to_int(a, parts[2]) : 1;
      if (o.lo < 0 || o.hi > 34 || o.lo > o.hi || o.step < 1) usage("--sizes out of range");
    } else if (a == "--no-graph") {
      o.graph = false;
    } else if (a == "--repeat") {
      o.repeat = std::max(1, to_int(a, next()));
    } else if (a == "--time-cap") {
      o.time_cap_s = std::atof(next().c_str());
    } else if (a == "--min-time") {
      o.min_time_s = std::atof(next().c_str());
      if (!(o.min_time_s >= 0)) usage("--min-time needs seconds >= 0");
    } else if (a == "--slow-max-log2") {
      o.slow_max_log2 = to_int(a, next());
    } else if (a == "--only") {
      o.only = split(next(), ',');
    } else if (a == "--out") {
      o.out = next();
    } else if (a == "--json") {
      o.json_path = next();
    } else if (a == "--racy-trials") {
      o.racy_trials = static_cast<std::size_t>(std::max(1, to_int(a, next())));
    } else if (a == "--racy-sizes") {
      o.racy_sizes.clear();
      for (const auto &s : split(next(), ',')) o.racy_sizes.push_back(to_int(a, s));
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  return o;
}

} // namespace reducetune::bench
