// NVRTC compilation of template instantiations into cubin, batched, cached and parallel.
//
// Stages are separate types (jitify2's habit): a compile_request is data; compiling gives a
// compiled_program (cubin + lowered names + log), which never touches a GPU; loading a
// compiled_program into a context is the runner's business (cuda/module.hpp).
#pragma once

#include "reducetune/templates/template_library.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace reducetune {

struct compile_request {
  std::string source_path;                   // main source, in the template library
  std::vector<std::string> name_expressions; // instantiations to emit (deduplicated)
  std::string arch = "sm_90";                // real architecture: cubin, not PTX
  std::vector<std::string> extra_options;    // appended to the standard options
  // Folders of the template library offered to NVRTC as headers, besides the source's own
  // folder (the family's "includes"); empty means {"common"}.
  std::vector<std::string> include_folders;
  bool rdc = false;                          // relocatable code + device runtime via nvJitLink
};

struct compiled_program {
  std::string cubin;                              // loadable image (linked when rdc)
  std::map<std::string, std::string> lowered;     // name expression -> mangled name
  std::string log;                                // NVRTC log, kept on success too
  std::vector<std::string> options;               // the exact options used
  double compile_seconds = 0.0;                   // wall time of the NVRTC (+ link) work
  std::string key;                                // cache key (hex), see compile_cache

  [[nodiscard]] const std::string &mangled(const std::string &name_expression) const;
};

} // namespace reducetune

namespace reducetune {

class compile_cache;

struct batch_options {
  // Name expressions per NVRTC program: one program amortises parsing the template over many
  // instantiations; too many make one failure expensive (the batch is retried one by one).
  unsigned max_requests_per_program = 24;
  unsigned threads = 0; // 0: one per hardware thread
};

// One request's result in a batch: failures are data, not exceptions.
struct compile_outcome {
  std::shared_ptr<const compiled_program> program; // null when the compile failed
  std::string error;                               // the reason, with the log, when failed
  bool cached = false;                             // served by the cache
};

class compiler {
public:
  explicit compiler(template_library library, std::shared_ptr<compile_cache> cache = nullptr);

  // Compiles one request (or serves it from the cache); throws compile_error with the log.
  // A request another thread is compiling now (compile_ahead's background threads) is waited
  // for, not compiled a second time.
  [[nodiscard]] std::shared_ptr<const compiled_program> compile(const compile_request &request);

  // As compile(), but returns null at once where another thread is compiling the request: a
  // background thread has better things to do than wait for it (jit/compile_ahead.hpp).
  [[nodiscard]] std::shared_ptr<const compiled_program>
  compile_unless_busy(const compile_request &request);

  // Whether the memory cache holds the request's program (no counter moves, no backend asked).
  [[nodiscard]] bool holds(const compile_request &request);

  // Requests of one program group (program_group) compiled as one NVRTC program, those the
  // cache holds or another thread compiles left out; where the program fails, each alone.
  // compile() joins them while they compile, as it joins compile_unless_busy's. With a backend
  // that processes share: one another process stored is loaded, one it claimed left to it.
  struct group_outcome {
    std::size_t compiled = 0, skipped = 0, failed = 0, loaded = 0;
  };
  group_outcome compile_group_unless_busy(const std::vector<compile_request> &group);
  // Requests with one source, include folders and options may share an NVRTC program.
  [[nodiscard]] std::string program_group(const compile_request &request) const;

  // Compiles many requests, batched into shared NVRTC programs compiled on a thread pool. A
  // request that compile() is compiling on another thread is joined; the batch's own compiles
  // are not announced to compile() (a run's batch and its evaluations never overlap).
  [[nodiscard]] std::vector<compile_outcome>
  compile_batch(const std::vector<compile_request> &requests, const batch_options &options = {});

  // The cache key: every source byte, the options, the name expressions and NVRTC's version.
  [[nodiscard]] std::string key_of(const compile_request &request);
  [[nodiscard]] std::vector<std::string> options_for(const compile_request &request) const;

  [[nodiscard]] const template_library &library() const noexcept { return m_library; }
  [[nodiscard]] compile_cache &cache() noexcept { return *m_cache; }

  // NVRTC programs compiled so far (one per program of a batch); a cache hit or a wait for
  // another thread's compile of the same request compiles none. Tests count compiles twice.
  [[nodiscard]] std::size_t programs_compiled() const noexcept { return m_programs_compiled; }
  // compile() calls, and batch requests, that waited for another thread's compile of theirs.
  [[nodiscard]] std::size_t joined() const noexcept { return m_joined; }

private:
  using pending_program = std::shared_future<std::shared_ptr<const compiled_program>>;
  std::shared_ptr<const compiled_program> obtain(const compile_request &request, bool join);
  std::optional<pending_program> inflight(const std::string &key);
  using program_ptr = std::shared_ptr<const compiled_program>;
  // Requests of one program group compiled as one NVRTC program, each program entering the
  // cache under keys[j] before done(j, program); where the program fails, each request alone,
  // so that one bad instantiation fails only its own: failed(j, e), called inside the catch
  // (std::current_exception() is e). compile_batch's parts and compile_group_unless_busy's.
  void compile_together(const std::vector<const compile_request *> &group,
                        const std::vector<std::string> &keys,
                        const std::function<void(std::size_t, program_ptr)> &done,
                        const std::function<void(std::size_t, const std::exception &)> &failed);

  struct bundle; // a main source with the headers it may include, and their hash
  const bundle &bundle_for(const compile_request &request);
  compiled_program compile_now(const bundle &b, const std::vector<const compile_request *> &group);

  template_library m_library;
  std::shared_ptr<compile_cache> m_cache;
  std::string m_nvrtc_version;
  std::mutex m_bundles_mutex;
  std::map<std::string, std::shared_ptr<const bundle>> m_bundles;
  std::mutex m_inflight_mutex;
  std::map<std::string, pending_program> m_inflight; // key -> the compile in progress
  std::atomic<std::size_t> m_programs_compiled{0};
  std::atomic<std::size_t> m_joined{0};
};

} // namespace reducetune
