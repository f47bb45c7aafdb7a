#include "reducetune/measure/remote_evaluate.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

extern char **environ;

namespace reducetune {
namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::size_t max_reply_bytes = 256u << 20; // far beyond any real reply

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

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t w = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
  return true;
}

enum class read_status { ok, eof, timeout, error, too_long };

// Reads up to the next '\n' (not included) into line; pending keeps what follows it.
read_status read_line(int fd, std::string &pending, std::string &line,
                      clock_type::time_point deadline) {
  for (;;) {
    if (const auto nl = pending.find('\n'); nl != std::string::npos) {
      line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return read_status::ok;
    }
    if (pending.size() > max_reply_bytes) return read_status::too_long;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0) return read_status::timeout;
    pollfd pfd{fd, POLLIN, 0};
    const int ready =
        ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return read_status::error;
    if (ready == 0) return read_status::timeout;
    char buffer[65536];
    const ssize_t r = ::read(fd, buffer, sizeof buffer);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno == ECONNRESET ? read_status::eof : read_status::error;
    if (r == 0) return read_status::eof;
    pending.append(buffer, static_cast<std::size_t>(r));
  }
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status))
    return std::string{"worker died with "} + signal_name(WTERMSIG(status)) + " (signal " +
           std::to_string(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "worker ended";
}

std::filesystem::path self_directory() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : self.parent_path();
}

} // namespace

std::string default_worker_path() {
  if (const char *env = std::getenv("REDUCETUNE_WORKER"); env && *env) return env;
  const auto dir = self_directory();
  std::string looked;
  for (const auto &candidate :
       {dir / "reducetune-worker", dir.parent_path() / "tuner" / "reducetune-worker"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  throw error("reducetune-worker not found (looked at $REDUCETUNE_WORKER, " + looked +
              "); set REDUCETUNE_WORKER to its path");
}

remote_evaluator::remote_evaluator(remote_options options) : m_options(std::move(options)) {
  m_path = m_options.worker_path.empty() ? default_worker_path() : m_options.worker_path;
}

remote_evaluator::~remote_evaluator() {
  if (m_pid > 0) (void)stop(/*kill_first=*/true);
}

void remote_evaluator::start() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw error(std::string{"socketpair failed: "} + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the copies; the originals close at exec.
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  // The worker must die of its own signals, whatever the caller ignores or blocks.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGPIPE, SIGTERM})
    sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> args{m_path};
  args.insert(args.end(), m_options.worker_args.begin(), m_options.worker_args.end());
  std::vector<char *> argv;
  for (auto &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, m_path.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw error("cannot start the worker " + m_path + ": " + std::strerror(rc));
  }
  m_fd = fds[0];
  m_pid = pid;
  m_pending.clear();
  ++m_started;
}

std::string remote_evaluator::stop(bool kill_first) {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (m_pid <= 0) return "no worker";
  if (kill_first) ::kill(m_pid, SIGKILL);
  // A worker that announced its exit (or whose socket closed) gets a moment to leave; one
  // that does not is killed rather than waited for forever.
  int status = 0;
  pid_t r = 0;
  const auto deadline = clock_type::now() + std::chrono::seconds(10);
  for (;;) {
    r = ::waitpid(m_pid, &status, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r != 0) break;
    if (clock_type::now() > deadline) {
      ::kill(m_pid, SIGKILL);
      do {
        r = ::waitpid(m_pid, &status, 0);
      } while (r < 0 && errno == EINTR);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  m_pid = -1;
  if (r < 0) return std::string{"worker could not be reaped: "} + std::strerror(errno);
  return exit_text(status);
}

worker_reply remote_evaluator::failed(const worker_request &request, failure_kind kind,
                                      std::string reason) {
  worker_reply reply;
  reply.id = request.id;
  reply.variant_label = request.variant_label;
  reply.launch_label = request.launch_label;
  reply.wire_kind = reply_failure::evaluation;
  reply.result = failure{kind, std::move(reason)};
  reply.exits = true;
  return reply;
}

worker_reply remote_evaluator::call(const worker_request &original) {
  worker_request request = original;
  if (request.id == 0) request.id = m_next_id++;
  if (m_pid <= 0) start();

  const auto deadline =
      clock_type::now() + std::chrono::duration_cast<clock_type::duration>(m_options.timeout);
  std::string line;
  read_status rs = read_status::eof; // a worker gone before it read the request
  if (send_all(m_fd, to_json_line(request) + "\n"))
    rs = read_line(m_fd, m_pending, line, deadline);

  if (rs == read_status::timeout) {
    (void)stop(/*kill_first=*/true);
    return failed(request, failure_kind::timed_out,
                  "timed out after " + seconds_text(m_options.timeout.count()) + " s");
  }
  if (rs != read_status::ok) {
    std::string last_words = m_pending;
    const bool kill = rs != read_status::eof;
    std::string reason = stop(kill);
    if (rs == read_status::too_long) reason = "worker reply too long; " + reason;
    if (rs == read_status::error) reason = "reading the worker failed; " + reason;
    if (!last_words.empty())
      reason += " after writing \"" + last_words.substr(0, 200) + "\"";
    return failed(request, failure_kind::worker_crashed, std::move(reason));
  }

  worker_reply reply;
  try {
    reply = parse_reply(line);
    if (reply.id != 0 && reply.id != request.id)
      throw protocol_error("reply id " + std::to_string(reply.id) + " for request " +
                           std::to_string(request.id));
  } catch (const protocol_error &e) {
    const std::string gone = stop(/*kill_first=*/true);
    return failed(request, failure_kind::worker_crashed,
                  std::string{"worker sent a bad reply ("} + e.what() + "); " + gone);
  }
  if (reply.exits) (void)stop(/*kill_first=*/false);
  if (reply.wire_kind == reply_failure::bad_request)
    throw protocol_error("the worker refused the request: " +
                         std::get<failure>(reply.result).reason);
  return reply;
}

evaluation remote_evaluator::evaluate(const worker_request &request) {
  return call(request).result;
}

} // namespace reducetune
