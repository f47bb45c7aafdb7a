// Fault isolation: requests are evaluated in a child process that can die without taking
// the caller with it.
//
// A variant that faults the CUDA context (illegal address, launch failure: the context is
// lost for the rest of the process) or hangs must not end a study. The supervisor forks a
// worker that loops "read request → call the worker function → write reply" over a socket
// pair; the parent waits for each reply up to a timeout. When the worker dies (a signal, a
// non-zero exit) or times out (it is then killed with SIGKILL), call() returns a typed
// failure with the reason ("worker died with SIGSEGV (signal 11)", "timed out after 10 s"),
// and the next call starts a fresh worker. An exception thrown by the worker function is
// not a crash: it comes back as a failure of kind `exception` and the worker stays up.
//
// Requirements on the caller:
// - the parent must not have initialised CUDA before the first fork (CUDA is not fork-safe);
//   the worker creates its own context. Compiling with NVRTC in the parent is fine.
// - fork() copies only the calling thread: the worker function must not rely on other
//   threads of the parent (a thread pool) or on locks they might hold.
// - call() is not thread-safe; one supervisor per worker.
// The worker resets the fatal-signal handlers to their defaults (a test framework's handler
// would otherwise turn a crash into a report) and leaves through _exit().
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace reducetune {

using worker_function = std::function<std::string(const std::string &request)>;

enum class worker_failure { none, crashed, exited, timed_out, exception, io_error };

[[nodiscard]] const char *to_string(worker_failure f) noexcept;

struct worker_reply {
  worker_failure failure = worker_failure::none;
  std::string payload; // the worker function's return value when failure == none
  std::string reason;  // why it failed, for the record
  [[nodiscard]] bool ok() const noexcept { return failure == worker_failure::none; }
};

class worker_supervisor {
public:
  explicit worker_supervisor(worker_function fn,
                             std::chrono::duration<double> timeout = std::chrono::seconds(10));
  ~worker_supervisor();
  worker_supervisor(const worker_supervisor &) = delete;
  worker_supervisor &operator=(const worker_supervisor &) = delete;

  // Sends one request to the worker (starting it if needed) and waits for its reply.
  [[nodiscard]] worker_reply call(const std::string &request);

  // Workers started so far (1 after the first call; +1 after each death).
  [[nodiscard]] std::size_t workers_started() const noexcept { return m_started; }
  // Process id of the live worker, or -1.
  [[nodiscard]] int worker_pid() const noexcept { return m_pid; }

private:
  void start();
  // Kills (if asked) and reaps the worker; returns the reason it is gone.
  std::string stop(bool kill_first);

  worker_function m_fn;
  std::chrono::duration<double> m_timeout;
  int m_pid = -1;
  int m_fd = -1; // the parent's end of the socket pair
  std::size_t m_started = 0;
};

} // namespace reducetune
