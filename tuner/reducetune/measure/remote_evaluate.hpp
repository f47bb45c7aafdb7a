// evaluate() in a separate worker process (`reducetune-worker`, worker_protocol.hpp), so that a
// variant that faults the CUDA context or hangs is a typed failure and the caller goes on.
//
// The worker is a real executable started with posix_spawn (fork + exec), not a plain fork:
// the caller may have initialised CUDA, a forked CUDA context is unusable, and an exec'd
// process creates its own. Its stdin and stdout are one end of a Unix
// socket pair; its stderr is the caller's.
//
// For each request: write one line, wait for one line up to the timeout. Then:
// - a reply: returned; when it says "exits" (the worker leaves after every launch_error,
//   because its context may be poisoned) the worker is reaped and the next request starts a
//   fresh one;
// - end of file (the worker died): failure worker_crashed, "worker died with SIGSEGV
//   (signal 11)" or "worker exited with status N" (plus the last words it wrote to stdout,
//   if any), and a fresh worker next time;
// - no reply in time: the worker is killed (SIGKILL), failure timed_out "timed out after
//   T s", and a fresh worker next time;
// - a reply that is not a protocol line: the worker is killed and restarted; the request
//   fails as worker_crashed with the parse error (a worker that writes garbage is broken).
// A bad_request reply (the request was malformed) is a bug of the caller: protocol_error.
//
// Not thread-safe; one remote_evaluator per worker (several may run side by side).
#pragma once

#include "reducetune/measure/worker_protocol.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace reducetune {

struct remote_options {
  // The executable; "" = default_worker_path().
  std::string worker_path;
  // argv after argv[0] (tests run fake workers as {"/bin/sh", "-c", script}).
  std::vector<std::string> worker_args;
  // Per request, from writing it to reading the whole reply (compiling included).
  std::chrono::duration<double> timeout = std::chrono::seconds(120);
};

// $REDUCETUNE_WORKER when set; else `reducetune-worker` next to the running executable; else
// ../tuner/reducetune-worker from it (the build tree: tests/ beside tuner/). Throws error
// naming the places it looked when none exists.
[[nodiscard]] std::string default_worker_path();

class remote_evaluator {
public:
  explicit remote_evaluator(remote_options options = {});
  ~remote_evaluator();
  remote_evaluator(const remote_evaluator &) = delete;
  remote_evaluator &operator=(const remote_evaluator &) = delete;

  // The evaluation (a measurement or a typed failure); never throws for a dead or hung worker
  // or a failing variant. Throws protocol_error for a bad_request reply, error when the
  // worker cannot be started at all.
  [[nodiscard]] evaluation evaluate(const worker_request &request);

  // The whole reply (device, compile time, …); a dead or hung worker gives a reply whose
  // result is the failure (exits = true).
  [[nodiscard]] worker_reply call(const worker_request &request);

  // Workers started so far (1 after the first request; +1 after each death or exit).
  [[nodiscard]] std::size_t workers_started() const noexcept { return m_started; }
  // Process id of the live worker, or -1.
  [[nodiscard]] int worker_pid() const noexcept { return m_pid; }
  [[nodiscard]] const std::string &worker_path() const noexcept { return m_path; }

private:
  void start();
  // Closes the socket, kills (if asked) and reaps the worker; the reason it is gone.
  std::string stop(bool kill_first);
  worker_reply failed(const worker_request &request, failure_kind kind, std::string reason);

  remote_options m_options;
  std::string m_path;
  int m_pid = -1;
  int m_fd = -1;
  std::string m_pending; // bytes read after the last complete line
  std::uint64_t m_next_id = 1;
  std::size_t m_started = 0;
};

} // namespace reducetune
