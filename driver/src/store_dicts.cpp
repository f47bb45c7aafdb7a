// Rows as flat dicts: store_dicts.hpp says which.
#include "store_dicts.hpp"

#include "reducetune/verify/patterns.hpp"

namespace rtpy {

// Built from the typed problem (an unknown type or operator, or an extent of 0, is refused
// here, in one line naming the problem, rather than by the store's CHECK constraints).
db::workload_record workload_of(const nb::dict &d) {
  const rt::problem p{rt::dtype_from_string(nb::cast<std::string>(d["dtype"])),
                      rt::op_from_string(nb::cast<std::string>(d["op"])),
                      {get_or<std::uint64_t>(d, "outer", 1), nb::cast<std::uint64_t>(d["n"]),
                       get_or<std::uint64_t>(d, "inner", 1)}};
  return db::workload_record::of(
      p, get_or<std::string>(d, "data_pattern", "uniform"),
      get_or<std::int64_t>(d, "seed", static_cast<std::int64_t>(rt::default_data_seed)));
}

void put_workload(nb::dict &d, const db::workload_record &w) {
  d["dtype"] = w.dtype;
  d["op"] = w.op;
  d["n"] = w.n;
  d["data_pattern"] = w.data_pattern;
  d["seed"] = w.seed;
  d["outer"] = w.outer;
  d["inner"] = w.inner;
}

shape_tuple shape_tuple_of(const reducetune::reduction_shape &s) {
  return {s.outer, s.r, s.inner};
}

db::device_record device_of(const nb::dict &d) {
  db::device_record r;
  r.name = nb::cast<std::string>(d["name"]);
  r.uuid = nb::cast<std::string>(d["uuid"]);
  r.cc_major = get_or<int>(d, "cc_major", 0);
  r.cc_minor = get_or<int>(d, "cc_minor", 0);
  r.sm_count = get_or<int>(d, "sm_count", 0);
  r.l2_bytes = get_or<std::int64_t>(d, "l2_bytes", 0);
  r.bus_width_bits = get_or<int>(d, "bus_width_bits", 0);
  r.memory_clock_khz = get_or<int>(d, "memory_clock_khz", 0);
  r.driver_version = get_or<int>(d, "driver_version", 0);
  r.toolkit_version = get_or<int>(d, "toolkit_version", get_or<int>(d, "runtime_version", 0));
  return r;
}

nb::dict device_dict(const db::device_record &r) {
  nb::dict d = device_model_dict(r);
  d["id"] = r.id;
  d["toolkit_version"] = r.toolkit_version;
  return d;
}

db::measurement_key key_of(const nb::dict &d) {
  db::measurement_key k;
  k.device_id = nb::cast<std::int64_t>(d["device_id"]);
  k.variant_label = nb::cast<std::string>(d["variant_label"]);
  k.launch_label = nb::cast<std::string>(d["launch_label"]);
  k.workload = workload_of(d);
  k.template_hash = get_or<std::string>(d, "template_hash", "");
  k.driver_version = get_or<int>(d, "driver_version", 0);
  k.toolkit_version = get_or<int>(d, "toolkit_version", 0);
  return k;
}

} // namespace rtpy
