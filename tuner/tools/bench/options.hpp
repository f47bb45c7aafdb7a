// reducetune-bench's command line: the options struct (what to measure, how long, where the
// report goes) and the parser that fills it. A bad argument prints the usage and exits with 2.
#pragma once

#include "reducetune/space/element.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace reducetune::bench {

struct options {
  std::vector<dtype> dtypes{dtype::float32, dtype::int32};
  reduce_op op = reduce_op::sum;
  int lo = 10, hi = 30, step = 2;
  int repeat = 1;
  bool graph = true; // time CUDA-graph replays of each sequence (--no-graph: direct launches)
  double time_cap_s = 0.3;
  // nvbench's --min-time: cold samples add up to at least this before the noise may stop them,
  // so that the median of a microsecond-long sequence rests on hundreds of samples
  double min_time_s = 0.002;
  int slow_max_log2 = 28; // harris0..2 (interleaved addressing) above this are skipped
  std::vector<std::string> only;
  std::string out, json_path;
  std::size_t racy_trials = 0;
  std::vector<int> racy_sizes{10, 16, 20, 24};
  std::string command;
};

// argv[0] and the arguments; the whole command line is kept (options::command) for the report.
options parse(int argc, char **argv);

} // namespace reducetune::bench
