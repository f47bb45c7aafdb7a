// A fixed pool of worker threads for compiling NVRTC programs in parallel (NVRTC is
// thread-safe across distinct programs). Tasks return futures; exceptions travel with them.
#pragma once

#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace reducetune {

class thread_pool {
public:
  // threads == 0 means std::thread::hardware_concurrency() (at least 1).
  explicit thread_pool(unsigned threads = 0);
  ~thread_pool();
  thread_pool(const thread_pool &) = delete;
  thread_pool &operator=(const thread_pool &) = delete;

  template <class F> auto submit(F &&task) -> std::future<decltype(task())> {
    using result_t = decltype(task());
    auto packaged = std::make_shared<std::packaged_task<result_t()>>(std::forward<F>(task));
    std::future<result_t> future = packaged->get_future();
    {
      std::lock_guard lock(m_mutex);
      m_queue.emplace([packaged] { (*packaged)(); });
    }
    m_ready.notify_one();
    return future;
  }

  [[nodiscard]] unsigned size() const noexcept { return static_cast<unsigned>(m_workers.size()); }

private:
  void work();

  std::vector<std::thread> m_workers;
  std::queue<std::function<void()>> m_queue;
  std::mutex m_mutex;
  std::condition_variable m_ready;
  bool m_stopping = false;
};

} // namespace reducetune
