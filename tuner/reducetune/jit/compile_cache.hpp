// The compile cache: request key -> compiled program, with hit / miss counters (jitify2's
// habit: counters are part of the contract and tested).
//
// The key (compiler::key_of) hashes every byte NVRTC sees (main source and every header),
// the options, the name expressions and the NVRTC version, so a changed template, option or
// compiler never reuses a stale cubin. A batch compile stores one shared program under the
// key of every request it served. A persistent backend (the SQLite store) may sit behind the
// memory map: a miss in memory asks the backend before compiling. A backend that several
// processes share (the folder of one `tune --devices` run: its GPU workers) may also say which
// programs another process is compiling now (claim), so that no two compile the same one.
#pragma once

#include "reducetune/jit/compiler.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace reducetune {

class cache_backend {
public:
  virtual ~cache_backend() = default;
  [[nodiscard]] virtual std::optional<compiled_program> load(const std::string &key) = 0;
  virtual void store(const std::string &key, const compiled_program &program) = 0;
  // True: no other process is compiling key, and this one now does until release(key).
  // False: another process claimed it (its program comes through load() once stored). A
  // backend of one process claims nothing.
  [[nodiscard]] virtual bool claim(const std::string &key) {
    (void)key;
    return true;
  }
  virtual void release(const std::string &key) { (void)key; }
};

class compile_cache {
public:
  explicit compile_cache(std::shared_ptr<cache_backend> backend = nullptr)
      : m_backend(std::move(backend)) {}

  [[nodiscard]] std::shared_ptr<const compiled_program> find(const std::string &key);
  void insert(const std::string &key, std::shared_ptr<const compiled_program> program);
  // The memory map's program for key, or null: no counter moves and no backend is asked (the
  // compiler's second look once it holds the in-flight lock, compile_ahead's skip).
  [[nodiscard]] std::shared_ptr<const compiled_program> peek(const std::string &key) const;
  // The backend's program for key, kept in memory, or null; no counter moves (compile_ahead's
  // look for what another process compiled: a background thread, not an evaluation).
  [[nodiscard]] std::shared_ptr<const compiled_program> load_stored(const std::string &key);
  // The backend's claim and release (cache_backend); true without a backend.
  [[nodiscard]] bool claim(const std::string &key);
  void release(const std::string &key);

  // A backend set after construction (the GPU worker's cache learns its run's shared folder
  // at its first compile); what the memory map holds stays.
  void set_backend(std::shared_ptr<cache_backend> backend);
  [[nodiscard]] std::shared_ptr<cache_backend> backend() const;

  [[nodiscard]] std::size_t hits() const noexcept { return m_hits; }
  [[nodiscard]] std::size_t misses() const noexcept { return m_misses; }
  [[nodiscard]] std::size_t size() const;
  void clear_memory(); // keeps the backend; used to measure backend (cross-process) hits

private:
  std::shared_ptr<cache_backend> m_backend;
  mutable std::mutex m_mutex;
  std::unordered_map<std::string, std::shared_ptr<const compiled_program>> m_programs;
  std::atomic<std::size_t> m_hits{0};
  std::atomic<std::size_t> m_misses{0};
};

} // namespace reducetune
