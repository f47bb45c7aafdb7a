// Work over the elements [0, n) in fixed chunks on the machine's threads. The chunks depend on
// n only, never on the thread count, so that what is combined in chunk order is the same on
// every machine. Why: a tune makes each element type's data at 2^30 elements and a reference
// of every workload; one thread took seconds for each (issue 25 Z, item 1).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace reducetune {

// Elements per chunk: large enough that a thread's start is noise, small enough that 2^30
// elements make a thousand chunks to share out.
inline constexpr std::uint64_t chunk_elements = 1ULL << 20;

[[nodiscard]] constexpr std::uint64_t chunks_of(std::uint64_t n) noexcept {
  return (n + chunk_elements - 1) / chunk_elements;
}

// The threads for_each_chunk runs on for n elements (this one included): up to 16.
[[nodiscard]] inline std::uint64_t chunk_threads(std::uint64_t n) noexcept {
  return std::min<std::uint64_t>(
      {chunks_of(n), 16, std::max(1U, std::thread::hardware_concurrency())});
}

// fn(worker, c, begin, end) for each chunk c of [0, n), on up to `workers` threads, worker <
// workers naming the thread that runs it: where the chunks' results combine in any order (an
// exact sum), each thread keeps one (the caller's count, chunk_threads(n) read once, sizes
// them). fn must not throw.
template <class Fn> void for_each_chunk_by_worker(std::uint64_t n, std::uint64_t workers, Fn fn) {
  const std::uint64_t chunks = chunks_of(n);
  std::atomic<std::uint64_t> next{0};
  auto work = [&](std::uint64_t worker) {
    for (std::uint64_t c; (c = next.fetch_add(1)) < chunks;)
      fn(worker, c, c * chunk_elements, std::min(n, (c + 1) * chunk_elements));
  };
  std::vector<std::thread> pool;
  try {
    for (std::uint64_t k = 1; k < workers; ++k) pool.emplace_back(work, k);
  } catch (const std::system_error &) { // no more threads: the ones started do the rest
  }
  work(0);
  for (auto &t : pool) t.join();
}

// fn(c, begin, end) for each chunk c of [0, n), on up to 16 threads (this one included); fn
// must not throw.
template <class Fn> void for_each_chunk(std::uint64_t n, Fn fn) {
  for_each_chunk_by_worker(n, chunk_threads(n),
                           [&fn](std::uint64_t, std::uint64_t c, std::uint64_t begin,
                                 std::uint64_t end) { fn(c, begin, end); });
}

} // namespace reducetune
