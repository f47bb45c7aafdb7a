// On the GPU: the evaluation cache keeps a workload's device copies for the next operator of
// the same input (sum, min and max of one size read the same bytes; a tune measures them one
// after the other) and for a smaller size that takes as many copies (its input is their
// prefix; a tune goes largest first), and each workload is still checked against its own
// reference.
#include "catch.hpp"

#include "reducetune/baseline/cub_baseline.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/prepared_workload.hpp"

#include <variant>

using namespace reducetune;

namespace {

evaluate_options quick() {
  evaluate_options o;
  o.cold_rule.max_samples = o.cold_rule.min_samples = 5;
  o.hot = false;
  return o;
}

} // namespace

TEST_CASE("sum, min and max of one input share its device copies, each verified on its own",
          "[gpu][measure]") {
  const device_info d = query_device();
  evaluation_cache cache;
  const workload sum{dtype::float32, reduce_op::sum, 1ULL << 20};
  const void *input = cache.workload_for(sum).input(0);
  for (const reduce_op op : {reduce_op::min, reduce_op::max, reduce_op::sum}) {
    workload w = sum;
    w.op = op;
    INFO(to_string(op));
    CHECK(cache.workload_for(w).input(0) == input); // not uploaded again
    CHECK(cache.workload_for(w).spec().op == op);
    const evaluation e = evaluate_cub(w, d, quick(), cache);
    if (const auto *f = std::get_if<failure>(&e)) FAIL(f->reason);
    CHECK(std::get<measurement>(e).check.ok); // against this operator's reference
  }
  SECTION("a product, or another offset, gets its own copies") {
    workload prod = sum;
    prod.op = reduce_op::prod;
    CHECK_FALSE(cache.workload_for(sum).input_serves(prod));
    workload shifted = sum;
    shifted.offset_elements = 1;
    CHECK_FALSE(cache.workload_for(sum).input_serves(shifted));
    const evaluation e = evaluate_cub(prod, d, quick(), cache);
    if (const auto *f = std::get_if<failure>(&e)) FAIL(f->reason);
  }
}

TEST_CASE("a smaller size of the same data reads the larger one's device copy as its prefix",
          "[gpu][measure]") {
  const device_info d = query_device();
  evaluation_cache cache;
  const workload large{dtype::float32, reduce_op::max, 1ULL << 27}; // 512 MiB: one copy
  const void *input = cache.workload_for(large).input(0);
  for (const reduce_op op : {reduce_op::sum, reduce_op::min}) {
    const workload smaller{dtype::float32, op, (1ULL << 26) + 3}; // 256 MiB: one copy
    INFO(to_string(op));
    CHECK(cache.workload_for(smaller).input(0) == input); // not uploaded again
    CHECK(cache.workload_for(smaller).spec().n == smaller.n);
    const evaluation e = evaluate_cub(smaller, d, quick(), cache);
    if (const auto *f = std::get_if<failure>(&e)) FAIL(f->reason);
    CHECK(std::get<measurement>(e).check.ok); // against the prefix's own reference
  }
  SECTION("a size that rotates over copies, or a larger one, gets its own") {
    const workload rotated{dtype::float32, reduce_op::sum, 1ULL << 24}; // 64 MiB: 4 copies
    CHECK_FALSE(cache.workload_for(large).input_serves(rotated));
    CHECK(cache.workload_for(rotated).copies() == 4);
    workload larger = large;
    larger.n = (1ULL << 27) + 1;
    CHECK_FALSE(cache.workload_for(large).input_serves(larger));
  }
}
