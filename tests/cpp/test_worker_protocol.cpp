// The worker protocol round-trips every field and rejects malformed lines with a message that
// names the field; the remote evaluator turns a crashing, exiting, hanging or garbling worker
// into a typed failure and answers the next request with a fresh worker. No GPU: the workers
// here are shell scripts that answer with canned replies.
#include "catch.hpp"

#include "reducetune/measure/remote_evaluate.hpp"
#include "reducetune/measure/worker_protocol.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <variant>

using namespace reducetune;

namespace {

worker_request sample_request() {
  worker_request r;
  r.id = 42;
  r.templates = "/some/folder";
  r.family = "tunable";
  r.variant_label = "tunable.int32.max.bs_256.u_4.v_4.warp_shuffle.blk_tree.fin_two_pass";
  r.launch_label = "ept_16.cap_0";
  r.load = workload{dtype::int32, reduce_op::max, (1ULL << 33) + 7, data_pattern::all_negative,
                    0xfeedbeefcafeULL, 3};
  r.options.cold_rule = {12, 345, 0.025, 0.3, 0.0625};
  r.options.hot_rule = {10, 99, 0.5, 0.125};
  r.options.hot = false;
  r.options.graph = false;
  r.options.ceiling_bytes_per_s = 3.1e12;
  r.options.tolerance.depth = 17;
  compiled_program p;
  for (int i = 0; i < 1000; ++i) p.cubin.push_back(static_cast<char>(i * 37)); // every byte
  p.lowered["rt::tunable::pass<int, rt::op_max>"] = "_Z4passIiN2rt6op_maxEEvPKT_";
  p.key = "abc123";
  r.program = p;
  return r;
}

timing sample_timing(double base) {
  timing t;
  t.samples_s = {base, base * 1.01, base * 0.99, 1.0 / 3.0};
  t.stats.count = 4;
  t.stats.median = base;
  t.stats.min = base * 0.99;
  t.stats.max = 1.0 / 3.0;
  t.stats.mean = 0.1 + 1e-17;
  t.stats.stddev = 1e-300;
  t.stats.rel_stddev = 0.012345678901234567;
  t.stopped = stop_reason::time_cap;
  return t;
}

worker_reply measurement_reply() {
  measurement m;
  m.cold = sample_timing(1.25e-5);
  m.hot = sample_timing(7.5e-6);
  m.bytes_read = 1ULL << 34;
  m.launches = 2;
  m.bytes_per_s = 2.9e12;
  m.percent_of_peak = 86.75;
  m.percent_of_ceiling = 97.5;
  m.check.ok = true;
  m.check.expected = "0.1000000000000000055511151231257827";
  m.check.got = "0.1";
  m.check.tolerance = std::numeric_limits<double>::infinity(); // a first-order estimate
  m.check.error = 5.5e-18;
  m.check.reason = "within γ bound";
  worker_reply r;
  r.id = 42;
  r.variant_label = "v";
  r.launch_label = "ept_16.cap_0";
  r.result = m;
  device_info d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  d.cc_major = 9;
  d.sm_count = 132;
  d.l2_bytes = 50u << 20;
  d.bus_width_bits = 5120;
  d.memory_clock_khz = 2619000;
  d.global_memory_bytes = 80ULL << 30;
  d.max_threads_per_block = 1024;
  d.max_shared_per_block = 227u << 10;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  r.device = d;
  r.compile_seconds = 0.25;
  r.compiled = true;
  return r;
}

void check_same(const timing &a, const timing &b) {
  CHECK(a.samples_s == b.samples_s);
  CHECK(a.stats.count == b.stats.count);
  CHECK(a.stats.median == b.stats.median);
  CHECK(a.stats.min == b.stats.min);
  CHECK(a.stats.max == b.stats.max);
  CHECK(a.stats.mean == b.stats.mean);
  CHECK(a.stats.stddev == b.stats.stddev);
  CHECK(a.stats.rel_stddev == b.stats.rel_stddev);
  CHECK(a.stopped == b.stopped);
}

std::string protocol_message(const std::string &line) {
  try {
    (void)parse_request(line);
  } catch (const protocol_error &e) {
    return e.what();
  }
  return "(accepted)";
}

// A worker written in sh: the request's family says what to do. Replies are canned lines.
std::string fake_worker_script() {
  worker_reply ok = measurement_reply();
  ok.id = 0; // a reply without an id is accepted for any request
  worker_reply poisoned;
  poisoned.result = failure{failure_kind::launch_error, "an illegal memory access was encountered"};
  poisoned.wire_kind = reply_failure::evaluation;
  poisoned.exits = true;
  const worker_reply refused = bad_request_reply(0, "missing field 'n'");
  return "while IFS= read -r line; do\n"
         "  case \"$line\" in\n"
         "    *'\"family\":\"crash\"'*) kill -SEGV $$ ;;\n"
         "    *'\"family\":\"exit3\"'*) exit 3 ;;\n"
         "    *'\"family\":\"hang\"'*) exec sleep 100 ;;\n"
         "    *'\"family\":\"garbage\"'*) echo 'this is not json' ;;\n"
         "    *'\"family\":\"poison\"'*) printf '%s\\n' '" +
         to_json_line(poisoned) +
         "'; exit 0 ;;\n"
         "    *'\"family\":\"refuse\"'*) printf '%s\\n' '" +
         to_json_line(refused) +
         "' ;;\n"
         "    *) printf '%s\\n' '" +
         to_json_line(ok) +
         "' ;;\n"
         "  esac\n"
         "done\n";
}

remote_evaluator fake_worker(double timeout_s = 10) {
  remote_options o;
  o.worker_path = "/bin/sh";
  o.worker_args = {"-c", fake_worker_script()};
  o.timeout = std::chrono::duration<double>(timeout_s);
  return remote_evaluator(o);
}

worker_request request_for_family(const std::string &family) {
  worker_request r;
  r.family = family;
  r.variant_label = family + ".float32.sum";
  r.launch_label = "ept_1";
  return r;
}

// Catch2 v2 and v3 spell the substring matcher differently; INFO shows the text on failure.
#define CHECK_THAT_CONTAINS(text, part)                                                        \
  do {                                                                                         \
    const std::string rt_text_ = (text);                                                       \
    INFO("text: " << rt_text_);                                                                \
    CHECK(rt_text_.find(part) != std::string::npos);                                           \
  } while (false)

failure failure_of(const evaluation &e) {
  REQUIRE(std::holds_alternative<failure>(e));
  return std::get<failure>(e);
}

} // namespace

TEST_CASE("base64 encodes the RFC 4648 vectors and round-trips every length", "[worker][protocol]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  std::string bytes;
  for (int n = 0; n < 300; ++n) {
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
    bytes.push_back(static_cast<char>(n * 131 + 7));
  }
}

TEST_CASE("base64 rejects text that is not base64", "[worker][protocol]") {
  CHECK_THROWS_AS(base64_decode("abc"), protocol_error);
  CHECK_THROWS_AS(base64_decode("ab!d"), protocol_error);
  CHECK_THROWS_AS(base64_decode("a=bc"), protocol_error);
  CHECK_THROWS_AS(base64_decode("ab=c"), protocol_error);
}

TEST_CASE("a request round-trips every field, the cubin byte for byte", "[worker][protocol]") {
  const worker_request r = sample_request();
  const std::string line = to_json_line(r);
  CHECK(line.find('\n') == std::string::npos);
  const worker_request back = parse_request(line);
  CHECK(back.id == r.id);
  CHECK(back.templates == r.templates);
  CHECK(back.family == r.family);
  CHECK(back.variant_label == r.variant_label);
  CHECK(back.launch_label == r.launch_label);
  CHECK(back.load.type == r.load.type);
  CHECK(back.load.op == r.load.op);
  CHECK(back.load.n == r.load.n);
  CHECK(back.load.pattern == r.load.pattern);
  CHECK(back.load.seed == r.load.seed);
  CHECK(back.load.offset_elements == r.load.offset_elements);
  CHECK(back.options.cold_rule.min_samples == 12);
  CHECK(back.options.cold_rule.max_samples == 345);
  CHECK(back.options.cold_rule.max_noise == 0.025);
  CHECK(back.options.cold_rule.time_cap_s == 0.3);
  CHECK(back.options.cold_rule.min_time_s == 0.0625);
  CHECK(back.options.hot_rule.min_time_s == 0);
  CHECK(back.options.hot_rule.time_cap_s == 0.125);
  CHECK(back.options.hot == false);
  CHECK(back.options.graph == false);
  CHECK(back.options.ceiling_bytes_per_s == 3.1e12);
  CHECK(back.options.tolerance.depth == 17);
  REQUIRE(back.program.has_value());
  CHECK(back.program->cubin == r.program->cubin);
  CHECK(back.program->lowered == r.program->lowered);
  CHECK(back.program->key == r.program->key);
}

TEST_CASE("a request without a program or options takes the defaults", "[worker][protocol]") {
  const worker_request back = parse_request(
      R"({"family":"seeds","variant":"x","launch":"y","workload":{"dtype":"float32","op":"sum","n":1024}})");
  CHECK_FALSE(back.program.has_value());
  CHECK(back.templates.empty());
  CHECK(back.id == 0);
  CHECK(back.load.pattern == workload{}.pattern);
  CHECK(back.load.seed == workload{}.seed);
  CHECK(back.options.cold_rule.min_samples == stopping_rule{}.min_samples);
  CHECK(back.options.hot == evaluate_options{}.hot);
}

TEST_CASE("a measurement reply round-trips samples, statistics, verdict and device",
          "[worker][protocol]") {
  const worker_reply r = measurement_reply();
  const std::string line = to_json_line(r);
  CHECK(line.find('\n') == std::string::npos);
  const worker_reply back = parse_reply(line);
  CHECK(back.id == 42);
  CHECK(back.variant_label == "v");
  CHECK(back.launch_label == "ept_16.cap_0");
  CHECK(back.wire_kind == reply_failure::none);
  CHECK_FALSE(back.exits);
  REQUIRE(std::holds_alternative<measurement>(back.result));
  const auto &m = std::get<measurement>(back.result);
  const auto &want = std::get<measurement>(r.result);
  check_same(m.cold, want.cold);
  check_same(m.hot, want.hot);
  CHECK(m.bytes_read == want.bytes_read);
  CHECK(m.launches == want.launches);
  CHECK(m.bytes_per_s == want.bytes_per_s);
  CHECK(m.percent_of_peak == want.percent_of_peak);
  CHECK(m.percent_of_ceiling == want.percent_of_ceiling);
  CHECK(m.check.ok);
  CHECK(m.check.expected == want.check.expected);
  CHECK(m.check.got == want.check.got);
  CHECK(std::isinf(static_cast<double>(m.check.tolerance)));
  CHECK(m.check.error == want.check.error);
  CHECK(m.check.reason == want.check.reason);
  REQUIRE(back.device.has_value());
  CHECK(back.device->name == r.device->name);
  CHECK(back.device->uuid == r.device->uuid);
  CHECK(back.device->arch() == 90);
  CHECK(back.device->memory_clock_khz == r.device->memory_clock_khz);
  CHECK(back.device->peak_bytes_per_s() == r.device->peak_bytes_per_s());
  CHECK(back.compile_seconds == 0.25);
  CHECK(back.compiled);
}

TEST_CASE("a measurement without hot samples comes back without them", "[worker][protocol]") {
  worker_reply r = measurement_reply();
  std::get<measurement>(r.result).hot = timing{};
  const worker_reply back = parse_reply(to_json_line(r));
  CHECK(std::get<measurement>(back.result).hot.samples_s.empty());
}

TEST_CASE("failure replies keep their kind, reason and exit flag", "[worker][protocol]") {
  for (failure_kind k : {failure_kind::invalid_configuration, failure_kind::launch_error,
                         failure_kind::wrong_result, failure_kind::worker_crashed,
                         failure_kind::timed_out, failure_kind::device_error}) {
    worker_reply r;
    r.id = 9;
    r.result = failure{k, "why \"quoted\"\nand on two lines"};
    r.wire_kind = reply_failure::evaluation;
    r.exits = k == failure_kind::launch_error;
    const std::string line = to_json_line(r);
    CHECK(line.find('\n') == std::string::npos);
    const worker_reply back = parse_reply(line);
    const failure &f = failure_of(back.result);
    CHECK(f.kind == k);
    CHECK(f.reason == "why \"quoted\"\nand on two lines");
    CHECK(back.exits == (k == failure_kind::launch_error));
    CHECK(back.wire_kind == reply_failure::evaluation);
  }
  worker_reply compile;
  compile.wire_kind = reply_failure::compile_error;
  compile.result = failure{failure_kind::invalid_configuration, "compile error: expected a ';'"};
  const std::string line = to_json_line(compile);
  CHECK(line.find("\"kind\":\"compile_error\"") != std::string::npos);
  const worker_reply back = parse_reply(line);
  CHECK(back.wire_kind == reply_failure::compile_error);
  CHECK(failure_of(back.result).kind == failure_kind::invalid_configuration);
  CHECK(failure_of(back.result).reason == "compile error: expected a ';'");
  CHECK(parse_reply(to_json_line(bad_request_reply(3, "x"))).wire_kind == reply_failure::bad_request);
}

TEST_CASE("malformed requests are refused with a message naming the problem", "[worker][protocol]") {
  CHECK_THAT_CONTAINS(protocol_message("not json at all"), "not JSON");
  CHECK_THAT_CONTAINS(protocol_message("[1, 2]"), "JSON object");
  CHECK_THAT_CONTAINS(protocol_message(R"({"variant":"x","launch":"y","workload":{}})"), "'family'");
  CHECK_THAT_CONTAINS(protocol_message(R"({"family":"f","variant":"x","launch":"y"})"), "'workload'");
  CHECK_THAT_CONTAINS(protocol_message(
                 R"({"family":"f","variant":"x","launch":"y","workload":{"dtype":"float32","op":"sum","n":-4}})"), "workload.n");
  CHECK_THAT_CONTAINS(protocol_message(
                 R"({"family":"f","variant":"x","launch":"y","workload":{"dtype":"float16","op":"sum","n":4}})"), "workload.dtype");
  CHECK_THAT_CONTAINS(protocol_message(
                 R"({"family":"f","variant":"x","launch":"y","workload":{"dtype":"int32","op":"sum","n":4,"pattern":"zigzag"}})"), "workload.pattern");
  CHECK_THAT_CONTAINS(protocol_message(
                 R"({"family":7,"variant":"x","launch":"y","workload":{"dtype":"int32","op":"sum","n":4}})"), "family must be a string");
  CHECK_THAT_CONTAINS(protocol_message(
                 R"({"family":"f","variant":"x","launch":"y","workload":{"dtype":"int32","op":"sum","n":4},"options":{"hot":"yes"}})"), "options.hot");
  CHECK_THAT_CONTAINS(protocol_message(
                 R"({"family":"f","variant":"x","launch":"y","workload":{"dtype":"int32","op":"sum","n":4},"program":{"cubin_base64":"@@@@","lowered":{}}})"), "base64");
  CHECK_THROWS_AS(parse_reply(R"({"result":"maybe"})"), protocol_error);
  CHECK_THROWS_AS(parse_reply(R"({"result":"failure","failure":{"kind":"oops","reason":""}})"),
                  protocol_error);
  CHECK_THROWS_AS(parse_reply(R"({"result":"measurement"})"), protocol_error);
}

TEST_CASE("REDUCETUNE_WORKER names the worker executable", "[worker][remote]") {
  ::setenv("REDUCETUNE_WORKER", "/opt/somewhere/reducetune-worker", 1);
  CHECK(default_worker_path() == "/opt/somewhere/reducetune-worker");
  ::unsetenv("REDUCETUNE_WORKER");
}

TEST_CASE("a worker that cannot be started is an error, not a failure", "[worker][remote]") {
  remote_options o;
  o.worker_path = "/nonexistent/reducetune-worker";
  remote_evaluator client(o);
  CHECK_THROWS_AS(client.evaluate(request_for_family("ok")), error);
}

TEST_CASE("a healthy worker answers many requests in one process", "[worker][remote]") {
  auto client = fake_worker();
  for (int i = 0; i < 5; ++i) {
    const worker_reply r = client.call(request_for_family("ok"));
    REQUIRE(std::holds_alternative<measurement>(r.result));
    CHECK(r.device.has_value());
  }
  CHECK(client.workers_started() == 1);
  CHECK(client.worker_pid() > 0);
}

TEST_CASE("a worker killed by SIGSEGV is a worker_crashed failure and is restarted",
          "[worker][remote]") {
  auto client = fake_worker();
  const failure &f = failure_of(client.evaluate(request_for_family("crash")));
  CHECK(f.kind == failure_kind::worker_crashed);
  CHECK_THAT_CONTAINS(f.reason, "worker died with SIGSEGV");
  CHECK(client.worker_pid() == -1);
  CHECK(std::holds_alternative<measurement>(client.evaluate(request_for_family("ok"))));
  CHECK(client.workers_started() == 2);
}

TEST_CASE("a worker that exits without replying reports its status", "[worker][remote]") {
  auto client = fake_worker();
  const failure &f = failure_of(client.evaluate(request_for_family("exit3")));
  CHECK(f.kind == failure_kind::worker_crashed);
  CHECK_THAT_CONTAINS(f.reason, "exited with status 3");
  CHECK(std::holds_alternative<measurement>(client.evaluate(request_for_family("ok"))));
}

TEST_CASE("a hung worker is killed at the timeout and the next request gets a fresh one",
          "[worker][remote]") {
  auto client = fake_worker(0.5);
  const auto start = std::chrono::steady_clock::now();
  const failure &f = failure_of(client.evaluate(request_for_family("hang")));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(f.kind == failure_kind::timed_out);
  CHECK_THAT_CONTAINS(f.reason, "timed out after 0.5 s");
  CHECK(waited < 5);
  CHECK(std::holds_alternative<measurement>(client.evaluate(request_for_family("ok"))));
  CHECK(client.workers_started() == 2);
}

TEST_CASE("a worker that replies to a launch_error and leaves is replaced for the next request",
          "[worker][remote]") {
  auto client = fake_worker();
  REQUIRE(std::holds_alternative<measurement>(client.evaluate(request_for_family("ok"))));
  const worker_reply r = client.call(request_for_family("poison"));
  CHECK(r.exits);
  const failure &f = failure_of(r.result);
  CHECK(f.kind == failure_kind::launch_error);
  CHECK_THAT_CONTAINS(f.reason, "illegal memory access");
  CHECK(client.worker_pid() == -1);
  CHECK(std::holds_alternative<measurement>(client.evaluate(request_for_family("ok"))));
  CHECK(client.workers_started() == 2);
}

TEST_CASE("a worker that writes garbage is killed and the request fails", "[worker][remote]") {
  auto client = fake_worker();
  const failure &f = failure_of(client.evaluate(request_for_family("garbage")));
  CHECK(f.kind == failure_kind::worker_crashed);
  CHECK_THAT_CONTAINS(f.reason, "bad reply");
  CHECK(std::holds_alternative<measurement>(client.evaluate(request_for_family("ok"))));
}

TEST_CASE("a refused request is the caller's bug: protocol_error", "[worker][remote]") {
  auto client = fake_worker();
  CHECK_THROWS_AS(client.evaluate(request_for_family("refuse")), protocol_error);
}

TEST_CASE("ten requests with a crashing one in the middle: the other nine are answered",
          "[worker][remote]") {
  auto client = fake_worker();
  int measured = 0, crashed = 0;
  for (int i = 0; i < 10; ++i) {
    const evaluation e = client.evaluate(request_for_family(i == 4 ? "crash" : "ok"));
    if (std::holds_alternative<measurement>(e)) {
      ++measured;
    } else {
      CHECK(i == 4);
      CHECK(std::get<failure>(e).kind == failure_kind::worker_crashed);
      ++crashed;
    }
  }
  CHECK(measured == 9);
  CHECK(crashed == 1);
  CHECK(client.workers_started() == 2);
}
