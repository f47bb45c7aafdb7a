// Fault isolation on the CPU: a worker that crashes, aborts, exits or hangs on one request is
// reported with its reason and replaced, and the other requests complete.
#include "catch.hpp"

#include "reducetune/measure/worker_supervisor.hpp"

#include <csignal>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace reducetune;
using namespace std::chrono_literals;

namespace {

// Echoes the request squared; the request named `bad` misbehaves as `how` says.
worker_function misbehaving_on(int bad, std::string how) {
  return [bad, how](const std::string &request) -> std::string {
    const int k = std::stoi(request);
    if (k == bad) {
      if (how == "segv") std::raise(SIGSEGV);
      if (how == "abort") std::abort();
      if (how == "exit") std::_Exit(3);
      if (how == "hang")
        for (;;) pause();
      if (how == "throw") throw std::runtime_error("cannot evaluate " + request);
    }
    return std::to_string(k * k);
  };
}

void run_ten_requests(const std::string &how, const std::string &expected_reason,
                      worker_failure expected_kind) {
  worker_supervisor supervisor(misbehaving_on(5, how), 500ms);
  int completed = 0;
  for (int k = 0; k < 10; ++k) {
    const worker_reply reply = supervisor.call(std::to_string(k));
    if (k == 5) {
      CHECK(reply.failure == expected_kind);
      CHECK(reply.reason == expected_reason);
      CHECK(reply.payload.empty());
    } else {
      REQUIRE(reply.ok());
      CHECK(reply.payload == std::to_string(k * k));
      ++completed;
    }
  }
  CHECK(completed == 9);
}

} // namespace

TEST_CASE("a worker that segfaults is reported and restarted", "[measure][worker]") {
  run_ten_requests("segv", "worker died with SIGSEGV (signal 11)", worker_failure::crashed);
}

TEST_CASE("a worker that aborts is reported and restarted", "[measure][worker]") {
  run_ten_requests("abort", "worker died with SIGABRT (signal 6)", worker_failure::crashed);
}

TEST_CASE("a worker that exits is reported with its status", "[measure][worker]") {
  run_ten_requests("exit", "worker exited with status 3", worker_failure::exited);
}

TEST_CASE("a worker that hangs is killed after the timeout", "[measure][worker]") {
  run_ten_requests("hang", "timed out after 0.5 s", worker_failure::timed_out);
}

TEST_CASE("an exception is a failure of the request, not of the worker", "[measure][worker]") {
  worker_supervisor supervisor(misbehaving_on(5, "throw"), 1s);
  CHECK(supervisor.call("4").payload == "16");
  const int pid = supervisor.worker_pid();
  const auto reply = supervisor.call("5");
  CHECK(reply.failure == worker_failure::exception);
  CHECK(reply.reason == "cannot evaluate 5");
  CHECK(supervisor.call("6").payload == "36");
  CHECK(supervisor.worker_pid() == pid);
  CHECK(supervisor.workers_started() == 1);
}

TEST_CASE("the worker is restarted only after a death", "[measure][worker]") {
  worker_supervisor supervisor(misbehaving_on(1, "segv"), 1s);
  CHECK(supervisor.call("0").ok());
  CHECK(supervisor.workers_started() == 1);
  CHECK_FALSE(supervisor.call("1").ok());
  CHECK(supervisor.worker_pid() == -1);
  CHECK(supervisor.call("2").ok());
  CHECK(supervisor.workers_started() == 2);
}

TEST_CASE("large requests and replies cross the pipe intact", "[measure][worker]") {
  worker_supervisor supervisor([](const std::string &r) { return r + r; }, 5s);
  const std::string big(3 << 20, 'x');
  const auto reply = supervisor.call(big);
  REQUIRE(reply.ok());
  CHECK(reply.payload.size() == big.size() * 2);
}
