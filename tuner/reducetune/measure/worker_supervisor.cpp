#include "reducetune/measure/worker_supervisor.hpp"

#include "reducetune/errors.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

namespace reducetune {
namespace {

using clock_type = std::chrono::steady_clock;

// Reply framing: one status byte (0 ok, 1 exception), an 8-byte length, the bytes.
constexpr unsigned char status_ok = 0;
constexpr unsigned char status_exception = 1;

bool write_all(int fd, const void *data, std::size_t size) {
  const auto *p = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t w = ::send(fd, p, size, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    size -= static_cast<std::size_t>(w);
  }
  return true;
}

enum class read_status { ok, eof, timeout, error };

// Reads exactly size bytes; deadline == time_point::max() waits forever.
read_status read_all(int fd, void *data, std::size_t size, clock_type::time_point deadline) {
  auto *p = static_cast<char *>(data);
  while (size > 0) {
    int wait_ms = -1;
    if (deadline != clock_type::time_point::max()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock_type::now());
      if (left.count() <= 0) return read_status::timeout;
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return read_status::error;
    if (ready == 0) return read_status::timeout;
    const ssize_t r = ::read(fd, p, size);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return read_status::error;
    if (r == 0) return read_status::eof;
    p += r;
    size -= static_cast<std::size_t>(r);
  }
  return read_status::ok;
}

bool write_message(int fd, unsigned char status, const std::string &bytes) {
  const std::uint64_t size = bytes.size();
  return write_all(fd, &status, 1) && write_all(fd, &size, sizeof size) &&
         write_all(fd, bytes.data(), bytes.size());
}

const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGKILL: return "SIGKILL";
  case SIGTERM: return "SIGTERM";
  case SIGPIPE: return "SIGPIPE";
  default: return "a signal";
  }
}

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", s);
  return buffer;
}

[[noreturn]] void worker_main(int fd, const worker_function &fn) {
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGPIPE}) ::signal(sig, SIG_DFL);
  for (;;) {
    std::uint64_t size = 0;
    if (read_all(fd, &size, sizeof size, clock_type::time_point::max()) != read_status::ok)
      ::_exit(0); // the parent closed its end: done
    std::string request(size, '\0');
    if (read_all(fd, request.data(), size, clock_type::time_point::max()) != read_status::ok)
      ::_exit(0);
    bool sent = false;
    try {
      const std::string reply = fn(request);
      sent = write_message(fd, status_ok, reply);
    } catch (const std::exception &e) {
      sent = write_message(fd, status_exception, e.what());
    } catch (...) {
      sent = write_message(fd, status_exception, "unknown exception");
    }
    if (!sent) ::_exit(0);
  }
}

} // namespace

const char *to_string(worker_failure f) noexcept {
  switch (f) {
  case worker_failure::none: return "none";
  case worker_failure::crashed: return "crashed";
  case worker_failure::exited: return "exited";
  case worker_failure::timed_out: return "timed_out";
  case worker_failure::exception: return "exception";
  case worker_failure::io_error: return "io_error";
  }
  return "?";
}

worker_supervisor::worker_supervisor(worker_function fn, std::chrono::duration<double> timeout)
    : m_fn(std::move(fn)), m_timeout(timeout) {}

worker_supervisor::~worker_supervisor() {
  if (m_pid > 0) (void)stop(/*kill_first=*/true);
}

void worker_supervisor::start() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw error(std::string{"socketpair failed: "} + std::strerror(errno));
  std::fflush(nullptr); // buffered output must not be written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw error(std::string{"fork failed: "} + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    worker_main(fds[1], m_fn);
  }
  ::close(fds[1]);
  m_fd = fds[0];
  m_pid = pid;
  ++m_started;
}

std::string worker_supervisor::stop(bool kill_first) {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (m_pid <= 0) return "no worker";
  if (kill_first) ::kill(m_pid, SIGKILL);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(m_pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  m_pid = -1;
  if (r < 0) return std::string{"worker could not be reaped: "} + std::strerror(errno);
  if (WIFSIGNALED(status))
    return std::string{"worker died with "} + signal_name(WTERMSIG(status)) + " (signal " +
           std::to_string(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "worker ended";
}

worker_reply worker_supervisor::call(const std::string &request) {
  if (m_pid <= 0) start();
  worker_reply reply;
  const std::uint64_t size = request.size();
  const auto deadline =
      clock_type::now() + std::chrono::duration_cast<clock_type::duration>(m_timeout);
  unsigned char status = 0;
  std::uint64_t length = 0;
  read_status rs = read_status::error;
  if (write_all(m_fd, &size, sizeof size) && write_all(m_fd, request.data(), request.size())) {
    rs = read_all(m_fd, &status, 1, deadline);
    if (rs == read_status::ok) rs = read_all(m_fd, &length, sizeof length, deadline);
    if (rs == read_status::ok) {
      reply.payload.resize(length);
      rs = read_all(m_fd, reply.payload.data(), length, deadline);
    }
  } else {
    rs = read_status::eof; // the worker is gone before it read the request
  }
  if (rs == read_status::ok) {
    if (status == status_exception) {
      reply.failure = worker_failure::exception;
      reply.reason = std::move(reply.payload);
      reply.payload.clear();
    }
    return reply;
  }
  reply.payload.clear();
  if (rs == read_status::timeout) {
    (void)stop(/*kill_first=*/true);
    reply.failure = worker_failure::timed_out;
    reply.reason = "timed out after " + seconds_text(m_timeout.count()) + " s";
    return reply;
  }
  const bool io = rs == read_status::error;
  reply.reason = stop(/*kill_first=*/io);
  reply.failure = io ? worker_failure::io_error
                     : reply.reason.starts_with("worker died") ? worker_failure::crashed
                                                               : worker_failure::exited;
  return reply;
}

} // namespace reducetune
