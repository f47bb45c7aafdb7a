// reducetune-worker: evaluates variants for another process, one request per line.
//
//   reducetune-worker            (requests on stdin, replies on stdout; see worker_protocol.hpp)
//
// Started by remote_evaluator (measure/remote_evaluate.hpp) with fork + exec, so that a variant
// that poisons the CUDA context takes only this process with it. It keeps one compiler (with
// its in-memory cache) per template folder alive across requests, and the device it queried.
// After replying to a launch_error (or an unexpected error) it exits: its context may be
// lost, and the next request must find a fresh process. Nothing but replies goes to stdout;
// diagnostics go to stderr. Exit status 0 at end of input.
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/device_limits_of.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/measure/worker_protocol.hpp"
#include "reducetune/space/space.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>

using namespace reducetune;

namespace {

class worker {
public:
  worker_reply handle(const worker_request &request) {
    worker_reply reply;
    reply.id = request.id;
    reply.variant_label = request.variant_label;
    reply.launch_label = request.launch_label;
    try {
      reply.result = run(request, reply);
      if (const auto *f = std::get_if<failure>(&reply.result)) {
        reply.wire_kind = reply_failure::evaluation;
        reply.exits = f->kind == failure_kind::launch_error;
      }
    } catch (const compile_error &e) {
      reply.wire_kind = reply_failure::compile_error;
      reply.result =
          failure{failure_kind::invalid_configuration, std::string{"compile error: "} + e.what()};
    } catch (const invalid_configuration &e) {
      reply.wire_kind = reply_failure::evaluation;
      reply.result = failure{failure_kind::invalid_configuration, e.what()};
    } catch (const device_error &e) {
      reply.wire_kind = reply_failure::evaluation;
      reply.result = failure{failure_kind::device_error, e.what()};
    } catch (const std::exception &e) { // launch_error outside evaluate(), or a surprise
      reply.wire_kind = reply_failure::evaluation;
      reply.result = failure{failure_kind::launch_error, e.what()};
      reply.exits = true;
    }
    if (m_device) reply.device = *m_device;
    return reply;
  }

private:
  evaluation run(const worker_request &request, worker_reply &reply) {
    if (!m_device) m_device = query_device();
    const device_info &device = *m_device;
    compiler &c = compiler_for(request.templates);
    const family f = family::load(c.library(), request.family);
    const variant v = parse_variant_label(f, request.variant_label);
    const launch_config lc = parse_launch_label(f, request.launch_label);
    if (v.type != request.load.type || v.op != request.load.op)
      throw invalid_configuration("the workload (" + std::string{to_string(request.load.type)} +
                                  "." + to_string(request.load.op) +
                                  ") does not match the variant " + request.variant_label);
    const launch_plan plan = plan_launch(f, v, lc, limits_of(device));

    std::shared_ptr<const compiled_program> program;
    if (request.program) {
      program = std::make_shared<const compiled_program>(*request.program);
    } else {
      program = c.compile(request_for(f, v, device.arch()));
      reply.compiled = true;
      reply.compile_seconds = program->compile_seconds;
    }
    return evaluate(*program, plan, request.load, device, request.options, m_cache);
  }

  compiler &compiler_for(const std::string &templates) {
    auto &slot = m_compilers[templates];
    if (!slot) {
      // A folder is laid over the embedded library: test and user families include common/.
      slot = std::make_unique<compiler>(templates.empty()
                                            ? template_library::embedded()
                                            : template_library::embedded_with(templates));
    }
    return *slot;
  }

  std::optional<device_info> m_device;
  evaluation_cache m_cache; // the last workload's input and reference, kept between requests
  std::map<std::string, std::unique_ptr<compiler>> m_compilers;
};

// The id of a request that could not be parsed, when its JSON has one.
std::uint64_t id_of(const std::string &line) {
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("id") && j["id"].is_number_unsigned())
    return j["id"].get<std::uint64_t>();
  return 0;
}

bool write_reply(const worker_reply &reply) {
  const std::string line = to_json_line(reply) + "\n";
  return std::fwrite(line.data(), 1, line.size(), stdout) == line.size() &&
         std::fflush(stdout) == 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1) {
    std::fprintf(stderr,
                 "usage: %s  (JSON requests on stdin, one per line; see "
                 "tuner/reducetune/measure/worker_protocol.hpp)\n",
                 argv[0]);
    return 2;
  }
  worker w;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    worker_reply reply;
    try {
      reply = w.handle(parse_request(line));
    } catch (const protocol_error &e) {
      reply = bad_request_reply(id_of(line), e.what());
    }
    if (!write_reply(reply)) return 1;
    if (reply.exits) {
      std::fprintf(stderr,
                   "reducetune-worker: leaving after a %s (the CUDA context may be "
                   "lost): %s\n",
                   to_string(std::get<failure>(reply.result).kind),
                   std::get<failure>(reply.result).reason.c_str());
      // No exit handlers: tearing down a poisoned context can hang or fault.
      ::_exit(0);
    }
  }
  return 0;
}
