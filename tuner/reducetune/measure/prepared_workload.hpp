// A workload made ready to be reduced many times: the host data, the device input (at its
// offset), the host reference computed once, and the verdicts already given, by result bytes.
//
// Small inputs are held in several copies at different addresses, and samples rotate over
// them. Why: an input of a few MiB lies on a handful of 2 MiB pages, and where those pages
// fall in DRAM moved a latency-bound variant's median by ~10 % from one allocation to the
// next on an H200 (run-to-run at 2^20 int32), while samples within one allocation agreed to
// 1-2 %. Rotating turns the placement into an average that a second run reproduces.
//
// Why: a tuner evaluates hundreds of points on one workload, and a benchmark a dozen rows.
// Generating 2^30 elements, uploading them and computing their compensated reference costs
// seconds each time; the kernel being timed costs a millisecond.
#pragma once

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/l2_flush.hpp"
#include "reducetune/measure/workload.hpp"
#include "reducetune/verify/verify.hpp"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace reducetune {

// A workload's host data: generate_into() at some n. For sum, min and max, element i depends
// only on the seed, the pattern and the elements before it (not on n, nor on which of the
// three), so the first m elements of one generation ARE the data of every such workload of
// m <= n elements with the same type, pattern and seed (verify/test_patterns.cpp checks it).
// A product's data (mostly 1, sparse factors spaced by n) serves its own n only.
struct host_data {
  dtype type{};
  data_pattern pattern{};
  bool product = false;
  std::uint64_t seed = 0;
  std::uint64_t n = 0;
  // Not a std::vector: its zeroing is one thread's page faults over the whole input (2 s for
  // 4 GiB on the build machine); generate_into's threads touch these pages first.
  std::unique_ptr<unsigned char[]> bytes;
  std::uint64_t capacity = 0; // bytes allocated: at least n elements' (make_host_data)

  // Whether w's data is a prefix of these bytes.
  [[nodiscard]] bool serves(const workload &w) const noexcept;
};

// Host data for w, generated into the bytes of `spare` where nothing else holds them and they
// are large enough, else into a new allocation (spare freed first). Why: a tune makes each
// type's data once at its largest size, and the first touch of fresh pages cost more than the
// generating itself (build machine, 2^30 float64: 13 s against 1.8 s into touched pages);
// after float64's 8 GiB, int32 and int64 are made in the same pages.
[[nodiscard]] std::shared_ptr<host_data> make_host_data(const workload &w,
                                                        std::shared_ptr<host_data> spare = {});

class prepared_workload {
public:
  explicit prepared_workload(const workload &w);
  // w's data as the prefix of `data` (which must serve w): no generation of its own.
  prepared_workload(const workload &w, std::shared_ptr<const host_data> data);
  // The same, keeping the device copies of `before`, which hold w's input (input_serves):
  // sum, min and max of one size read the same bytes, and uploading them again cost each unit
  // of a tune a copy of up to 8 GiB from pageable memory; a smaller size of the same data is
  // the copies' prefix (host_data says why), a further 1 + 1/4 GiB per 4-byte type.
  prepared_workload(const workload &w, std::shared_ptr<const host_data> data,
                    prepared_workload &&before);

  [[nodiscard]] const workload &spec() const noexcept { return m_spec; }
  // Copies kept for rotation: as many as fit in 256 MiB, at least 1, at most 8.
  [[nodiscard]] static std::size_t copies_for(std::uint64_t input_bytes) noexcept;
  [[nodiscard]] std::size_t copies() const noexcept { return m_inputs.size(); }
  // Device pointer of copy i (offset applied); copy 0 is "the" input.
  [[nodiscard]] const void *input(std::size_t i = 0) const noexcept;
  // The workload's host data (the first n elements of a possibly longer generation).
  [[nodiscard]] const unsigned char *host() const noexcept { return m_host->bytes.get(); }
  [[nodiscard]] bool holds(const workload &w) const noexcept; // the same data and operator
  // The device copies hold w's input, whatever the operator (neither a product: its data is
  // its own): w's elements as their prefix (same offset), and as many copies as w's size
  // takes (copies_for: a small input keeps its rotation, a large one the one copy).
  [[nodiscard]] bool input_serves(const workload &w) const noexcept;

  // Uploads every copy again: after a wrong result, in case the variant wrote into it.
  void restore_input();

  // Copies one element back (from device memory, or page-locked host memory: the host
  // protocol's result) and checks it against the reference.
  [[nodiscard]] verdict check(const void *result, const tolerance_options &options);

private:
  // before's copies, once they are known to hold w's input (input_serves asks before's own
  // copy count, so it is asked before they move).
  static std::vector<device_buffer> take_inputs(prepared_workload &before, const workload &w);

  workload m_spec;
  std::shared_ptr<const host_data> m_host;
  std::vector<device_buffer> m_inputs;
  prepared_reference m_reference;
  // (tolerance depth, result bytes) → verdict: the same bytes get the same verdict
  std::map<std::pair<std::uint64_t, std::string>, verdict> m_seen;
};

// What an evaluating process keeps between evaluations: the last workload (only one: at 2^30
// a float32 input holds 4 GiB of host and device memory), the host data it was cut from, and
// the L2 flush buffer.
//
// Why the host data is kept apart: generating 2^30 elements costs seconds, and a tuning run
// visits every size of every operator. A run that asks for its largest n first (the tuner
// does, per element type) generates once; every smaller size and the other operators of that
// type take a prefix (host_data says why that is the same data).
class evaluation_cache {
public:
  [[nodiscard]] prepared_workload &workload_for(const workload &w);
  [[nodiscard]] l2_flush &flush_for(const device_info &device);
  void clear() noexcept;

private:
  std::unique_ptr<prepared_workload> m_workload;
  std::shared_ptr<host_data> m_data; // not const: its bytes are the next type's (make_host_data)
  std::unique_ptr<l2_flush> m_flush;
  std::uint64_t m_flush_l2_bytes = 0;
};

} // namespace reducetune
