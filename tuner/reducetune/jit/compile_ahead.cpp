#include "reducetune/jit/compile_ahead.hpp"

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

unsigned compile_ahead::default_threads(unsigned workers) {
  return threads_for(std::thread::hardware_concurrency(), workers);
}

compile_ahead::compile_ahead(compiler &c, unsigned threads, int nice, unsigned chunk)
    : m_compiler(c), m_chunk(std::max(1u, chunk)), m_chunk_now(m_chunk) {
  if (threads == 0) threads = default_threads();
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

void compile_ahead::queue(std::vector<compile_request> requests, unsigned sharers) {
  const unsigned chunk = chunk_for(requests.size(), m_counts.threads, sharers, m_chunk);
  std::deque<std::pair<std::string, compile_request>> waiting;
  for (auto &r : requests) {
    std::string group = m_compiler.program_group(r);
    waiting.emplace_back(std::move(group), std::move(r));
  }
  {
    std::lock_guard lock(m_mutex);
    m_counts.dropped += m_waiting.size();
    m_counts.queued += waiting.size();
    m_waiting = std::move(waiting);
    m_chunk_now = chunk;
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

std::vector<compile_request> compile_ahead::take() {
  std::vector<compile_request> chunk;
  const std::string group = m_waiting.front().first;
  while (!m_waiting.empty() && chunk.size() < m_chunk_now && m_waiting.front().first == group) {
    chunk.push_back(std::move(m_waiting.front().second));
    m_waiting.pop_front();
  }
  return chunk;
}

void compile_ahead::work(int nice) {
  lower_priority(nice);
  for (;;) {
    std::vector<compile_request> chunk;
    {
      std::unique_lock lock(m_mutex);
      m_ready.wait(lock, [this] { return m_stopping || !m_waiting.empty(); });
      if (m_stopping) return;
      chunk = take();
      ++m_busy;
    }
    compile_chunk(chunk);
    std::lock_guard lock(m_mutex);
    if (--m_busy == 0 && m_waiting.empty()) m_idle.notify_all();
  }
}

void compile_ahead::compile_chunk(const std::vector<compile_request> &chunk) {
  const auto start = std::chrono::steady_clock::now();
  compiler::group_outcome out;
  try {
    out = m_compiler.compile_group_unless_busy(chunk);
  } catch (const std::exception &) {
    out.failed = chunk.size(); // not NVRTC's refusal: the evaluations compile them again
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(m_mutex);
  m_counts.busy_s += seconds;
  m_counts.compiled += out.compiled;
  m_counts.failed += out.failed;
  m_counts.skipped += out.skipped;
  m_counts.loaded += out.loaded;
}

} // namespace reducetune
