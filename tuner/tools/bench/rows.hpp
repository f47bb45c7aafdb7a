// The data that passes from measuring to reporting in reducetune-bench: a row_result (status,
// reason, cold and hot timings, launches), the sampling rules every row is measured under, and
// a table_row (which run, dtype, n and variant the result belongs to). Plain structs, no CUDA,
// so that the report can be built and tested without a device.
#pragma once

#include "reducetune/measure/measurement.hpp"
#include "reducetune/measure/stopping_rule.hpp"
#include "reducetune/space/element.hpp"

#include <string>

namespace reducetune::bench {

struct row_result {
  std::string status = "ok"; // ok, WRONG, FAILED, skipped
  std::string reason;
  timing cold, hot;
  unsigned launches = 0;
};

struct rules {
  stopping_rule cold, hot;
  bool graph = false;
};

struct table_row {
  int run;
  dtype type;
  int log2n;
  std::string name, label, launch, flag;
  row_result r;
};

} // namespace reducetune::bench
