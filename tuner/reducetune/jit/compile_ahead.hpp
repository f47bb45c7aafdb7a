// Compiling ahead (issue 25): the variants a run may measure, compiled on background threads
// into the compiler's cache while the GPU measures other points, so that an evaluation finds
// its cubin ready instead of running NVRTC on the measuring thread (an H200 run of the
// README's units spent 47.6 s of its 2 minutes so, 47 ms an evaluation).
//
// The queue is the caller's order (what the run measures soonest first); queue() replaces
// what is still waiting. A thread takes up to `chunk` consecutive requests of one program
// group and compiles them as one NVRTC program: on the build machine, one thread, 24 tunable
// variants took 84-89 ms each alone and 39-41 ms each in one program (8 a program: 48-92 ms,
// a loaded machine); an evaluation that needs one of them meanwhile waits for the program. A
// request the cache already holds is skipped; one an evaluation is compiling is left to it
// (compiler::compile_unless_busy); one a background thread is compiling is joined by the evaluation
// that needs it (compiler::compile): nothing compiles twice. The threads run at a lower priority
// (nice): the measuring thread and the workload's preparation threads come first, the compiles take
// the cores they leave idle.
#pragma once

#include "reducetune/jit/compiler.hpp"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace reducetune {

struct ahead_counts {
  std::size_t queued = 0;   // requests handed to queue() so far
  std::size_t waiting = 0;  // not yet taken by a thread
  std::size_t compiled = 0; // compiled by the background threads
  std::size_t skipped = 0;  // already in the cache, or being compiled by an evaluation or by
                            // another process sharing the cache's backend (its claim)
  std::size_t loaded = 0;   // compiled by another process: loaded from the shared backend
  std::size_t failed = 0;   // NVRTC refused them: compiled again, and reported, when measured
  std::size_t dropped = 0;  // replaced by a later queue() before a thread took them
  double busy_s = 0.0;      // the threads' compile time, summed
  unsigned threads = 0;
};

class compile_ahead {
public:
  // threads == 0: default_threads() (one GPU worker). nice: added to each thread's niceness
  // (Linux).
  explicit compile_ahead(compiler &c, unsigned threads = 0, int nice = 10, unsigned chunk = 8);
  ~compile_ahead(); // drops what waits, finishes the compiles in progress
  compile_ahead(const compile_ahead &) = delete;
  compile_ahead &operator=(const compile_ahead &) = delete;

  // The one place the background's thread count is decided (the GPU worker asks it through
  // _core.compile_ahead's `workers`). One GPU worker on the host: one per hardware thread but
  // one (left to the measuring thread and its own compiles). `workers` GPU workers of one
  // `tune --devices` run: each its share, hardware / workers (4 x H200: 64 / 4), at least 1;
  // until 2026-11-27 each took hardware - 1, 4 x 15 NVRTC threads on a 16-thread host. At most
  // max_default_threads in either case (one worker on a 128-thread host: 16, not 127).
  static constexpr unsigned max_default_threads = 16;
  [[nodiscard]] static constexpr unsigned threads_for(unsigned hardware, unsigned workers) {
    const unsigned share = workers > 1 ? hardware / workers : (hardware > 1 ? hardware - 1 : 1);
    return share < 1 ? 1 : (share > max_default_threads ? max_default_threads : share);
  }
  [[nodiscard]] static unsigned default_threads(unsigned workers = 1);

  // Requests a thread takes as one program: `most` (the constructor's chunk) for a long queue,
  // fewer where the queue is short for the threads that split it (`threads` here, times the
  // `sharers` worker processes that share their programs), so that every thread has a program
  // and each is ready sooner. 4 x H200 (a200b82, the sweep's 95 variants, 4 workers): each
  // worker's first trial waited 0.29-0.77 s for its variant's 8-variant program, the next ones
  // took 9 ms; 95 over 4 x 16 threads is 2 a program.
  [[nodiscard]] static constexpr unsigned chunk_for(std::size_t queued, unsigned threads,
                                                    unsigned sharers, unsigned most) {
    const std::size_t spread = std::size_t{threads ? threads : 1u} * (sharers ? sharers : 1u);
    const std::size_t each = (queued + spread - 1) / spread;
    return each < 1 ? 1u : (each > most ? most : static_cast<unsigned>(each));
  }

  // Replaces the waiting requests with these, compiled in this order, in programs of
  // chunk_for(their count, the threads, sharers, the constructor's chunk).
  void queue(std::vector<compile_request> requests, unsigned sharers = 1);
  // Blocks until nothing waits and no thread compiles (tests; a run never waits for it).
  void wait_idle();
  [[nodiscard]] ahead_counts counts() const;

private:
  void work(int nice);
  std::vector<compile_request> take(); // the next chunk (something waits); lock held
  void compile_chunk(const std::vector<compile_request> &chunk);

  compiler &m_compiler;
  mutable std::mutex m_mutex;
  std::condition_variable m_ready;
  std::condition_variable m_idle;
  unsigned m_chunk;     // the most requests a program
  unsigned m_chunk_now; // this queue's (chunk_for)
  std::deque<std::pair<std::string, compile_request>> m_waiting; // (program group, request)
  unsigned m_busy = 0;
  bool m_stopping = false;
  ahead_counts m_counts;
  std::vector<std::thread> m_threads; // last: they start once everything above exists
};

} // namespace reducetune
