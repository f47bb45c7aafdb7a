// The store's rows as flat dicts (one key per column) and back, for bind_store.cpp: devices,
// workloads (with their shape) and measurement keys.
#pragma once

#include "common.hpp"

#include "reducetune/db/records.hpp"

#include <tuple>

namespace rtpy {

namespace db = reducetune::db;

// A workload's keys: dtype, op, n (the reduced extent r), data_pattern, seed, and its shape's
// outer and inner (1 when absent: the whole array (1, n, 1), as every dict before shapes).
db::workload_record workload_of(const nb::dict &d);
void put_workload(nb::dict &d, const db::workload_record &w);

// (outer, r, inner), as Python sees a shape (_core.Problem.shape).
using shape_tuple = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;
shape_tuple shape_tuple_of(const reducetune::reduction_shape &s);

db::device_record device_of(const nb::dict &d);
nb::dict device_dict(const db::device_record &r);

db::measurement_key key_of(const nb::dict &d);

} // namespace rtpy
