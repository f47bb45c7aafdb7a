#include "reducetune/verify/types.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

const char *to_string(dtype t) noexcept {
  switch (t) {
  case dtype::int32: return "int32";
  case dtype::int64: return "int64";
  case dtype::float32: return "float32";
  case dtype::float64: return "float64";
  }
  return "?";
}

const char *to_string(reduce_op op) noexcept {
  switch (op) {
  case reduce_op::sum: return "sum";
  case reduce_op::min: return "min";
  case reduce_op::max: return "max";
  case reduce_op::prod: return "prod";
  }
  return "?";
}

dtype dtype_from_string(const std::string &name) {
  for (dtype t : {dtype::int32, dtype::int64, dtype::float32, dtype::float64})
    if (name == to_string(t)) return t;
  throw invalid_configuration("unknown element type '" + name +
                              "' (expected int32, int64, float32 or float64)");
}

reduce_op reduce_op_from_string(const std::string &name) {
  for (reduce_op op : {reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod})
    if (name == to_string(op)) return op;
  throw invalid_configuration("unknown operator '" + name +
                              "' (expected sum, min, max or prod)");
}

std::size_t size_of(dtype t) noexcept {
  return (t == dtype::int32 || t == dtype::float32) ? 4 : 8;
}

bool is_integer(dtype t) noexcept { return t == dtype::int32 || t == dtype::int64; }

} // namespace reducetune
