#include "reducetune/space/element.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

const char *to_string(dtype t) noexcept {
  switch (t) {
  case dtype::int32:
    return "int32";
  case dtype::int64:
    return "int64";
  case dtype::float32:
    return "float32";
  case dtype::float64:
    return "float64";
  case dtype::float16:
    return "float16";
  case dtype::bfloat16:
    return "bfloat16";
  }
  return "?";
}

const char *to_string(reduce_op o) noexcept {
  switch (o) {
  case reduce_op::sum:
    return "sum";
  case reduce_op::min:
    return "min";
  case reduce_op::max:
    return "max";
  case reduce_op::prod:
    return "prod";
  }
  return "?";
}

namespace {
template <typename E, std::size_t N>
E from_string(const std::string &name, const E (&all)[N], const char *what) {
  std::string valid;
  for (E e : all) {
    if (name == to_string(e))
      return e;
    valid += (valid.empty() ? "" : ", ") + std::string(to_string(e));
  }
  throw invalid_configuration("unknown " + std::string(what) + " '" + name + "' (valid: " + valid +
                              ")");
}
} // namespace

dtype dtype_from_string(const std::string &name) {
  return from_string(name, all_dtypes, "element type");
}

reduce_op op_from_string(const std::string &name) {
  return from_string(name, all_ops, "operator");
}

std::size_t size_of(dtype t) noexcept {
  if (is_half(t)) return 2;
  return t == dtype::int32 || t == dtype::float32 ? 4 : 8;
}

bool is_half(dtype t) noexcept {
  return t == dtype::float16 || t == dtype::bfloat16;
}

dtype accumulator_of(dtype t) noexcept {
  return is_half(t) ? dtype::float32 : t;
}

bool is_integer(dtype t) noexcept {
  return t == dtype::int32 || t == dtype::int64;
}

const char *cpp_type(dtype t) noexcept {
  switch (t) {
  case dtype::int32:
    return "int";
  case dtype::int64:
    return "long long";
  case dtype::float32:
    return "float";
  case dtype::float64:
    return "double";
  case dtype::float16:
    return "__half";
  case dtype::bfloat16:
    return "__nv_bfloat16";
  }
  return "?";
}

const char *cpp_op(reduce_op o) noexcept {
  switch (o) {
  case reduce_op::sum:
    return "rt::op_sum";
  case reduce_op::min:
    return "rt::op_min";
  case reduce_op::max:
    return "rt::op_max";
  case reduce_op::prod:
    return "rt::op_prod";
  }
  return "?";
}

} // namespace reducetune
