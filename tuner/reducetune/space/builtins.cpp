#include "reducetune/space/builtins.hpp"

#include <algorithm>

namespace reducetune {

const std::vector<std::string> &builtin_identifiers() {
  static const std::vector<std::string> names = {"T",
                                                 "dtype",
                                                 "Op",
                                                 "op",
                                                 "sizeof_T",
                                                 "is_integer",
                                                 "is_float",
                                                 "arch",
                                                 "max_threads_per_block",
                                                 "max_shared_per_block",
                                                 "sm_count",
                                                 "warp_size",
                                                 "n",
                                                 "outer",
                                                 "r",
                                                 "inner"};
  return names;
}

bool is_builtin_identifier(const std::string &name) {
  const auto &names = builtin_identifiers();
  return std::find(names.begin(), names.end(), name) != names.end();
}

scope builtin_scope(dtype t, reduce_op o, const device_limits &limits) {
  scope s;
  s.set("T", std::string(to_string(t)));
  s.set("dtype", std::string(to_string(t)));
  s.set("Op", std::string(to_string(o)));
  s.set("op", std::string(to_string(o)));
  s.set("sizeof_T", static_cast<std::int64_t>(size_of(t)));
  s.set("is_integer", std::int64_t{is_integer(t)});
  s.set("is_float", std::int64_t{!is_integer(t)});
  s.set("arch", std::int64_t{limits.arch});
  s.set("max_threads_per_block", std::int64_t{limits.max_threads_per_block});
  s.set("max_shared_per_block", limits.max_shared_per_block);
  s.set("sm_count", std::int64_t{limits.sm_count});
  s.set("warp_size", std::int64_t{limits.warp_size});
  // The whole array (1, n, 1): r is evaluated only where n is bound, as n itself is.
  s.set("outer", std::int64_t{1});
  s.set("inner", std::int64_t{1});
  s.bind("r", expression::parse("n"));
  return s;
}

} // namespace reducetune
