#include "reducetune/jit/thread_pool.hpp"

#include <algorithm>

namespace reducetune {

thread_pool::thread_pool(unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  m_workers.reserve(threads);
  for (unsigned i = 0; i < threads; ++i)
    m_workers.emplace_back([this] { work(); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_ready.notify_all();
  for (auto &w : m_workers)
    w.join();
}

void thread_pool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(m_mutex);
      m_ready.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
      if (m_queue.empty())
        return; // stopping and drained
      task = std::move(m_queue.front());
      m_queue.pop();
    }
    task();
  }
}

} // namespace reducetune
