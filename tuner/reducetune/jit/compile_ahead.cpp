#include "reducetune/jit/compile_ahead.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>
#include <chrono>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace reducetune {
namespace {

// Lowers the calling thread's priority; best effort (a refusal leaves it as it was).
void lower_priority(int nice) {
#ifdef __linux__
  if (nice <= 0) return;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  const int now = getpriority(PRIO_PROCESS, tid);
  (void)setpriority(PRIO_PROCESS, tid, std::min(19, now + nice));
#else
  (void)nice;
#endif
}

} // namespace

compile_ahead::compile_ahead(compiler &c, unsigned threads, int nice) : m_compiler(c) {
  if (threads == 0) // one hardware thread left to the measuring thread and its own compiles
    threads = std::max(1u, std::thread::hardware_concurrency() - 1);
  m_counts.threads = threads;
  m_threads.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) m_threads.emplace_back([this, nice] { work(nice); });
}

compile_ahead::~compile_ahead() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
    m_waiting.clear();
  }
  m_ready.notify_all();
  for (auto &t : m_threads) t.join();
}

void compile_ahead::queue(std::vector<compile_request> requests) {
  {
    std::lock_guard lock(m_mutex);
    m_counts.dropped += m_waiting.size();
    m_counts.queued += requests.size();
    m_waiting.assign(std::make_move_iterator(requests.begin()),
                     std::make_move_iterator(requests.end()));
  }
  m_ready.notify_all();
}

void compile_ahead::wait_idle() {
  std::unique_lock lock(m_mutex);
  m_idle.wait(lock, [this] { return m_waiting.empty() && m_busy == 0; });
}

ahead_counts compile_ahead::counts() const {
  std::lock_guard lock(m_mutex);
  ahead_counts c = m_counts;
  c.waiting = m_waiting.size();
  return c;
}

void compile_ahead::work(int nice) {
  lower_priority(nice);
  for (;;) {
    compile_request request;
    {
      std::unique_lock lock(m_mutex);
      m_ready.wait(lock, [this] { return m_stopping || !m_waiting.empty(); });
      if (m_stopping) return;
      request = std::move(m_waiting.front());
      m_waiting.pop_front();
      ++m_busy;
    }
    compile_one(request);
    std::lock_guard lock(m_mutex);
    if (--m_busy == 0 && m_waiting.empty()) m_idle.notify_all();
  }
}

void compile_ahead::compile_one(const compile_request &request) {
  const auto start = std::chrono::steady_clock::now();
  bool compiled = false, failed = false;
  try {
    // an evaluation compiling it now, or the cache holding it: nothing to do here
    if (!m_compiler.holds(request)) compiled = m_compiler.compile_unless_busy(request) != nullptr;
  } catch (const error &) {
    failed = true; // not cached: its evaluation compiles it again and records the log
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(m_mutex);
  m_counts.busy_s += seconds;
  m_counts.compiled += compiled;
  m_counts.failed += failed;
  m_counts.skipped += !compiled && !failed;
}

} // namespace reducetune
