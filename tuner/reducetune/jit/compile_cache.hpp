// The compile cache: request key -> compiled program, with hit / miss counters (jitify2's
// habit: counters are part of the contract and tested).
//
// The key (compiler::key_of) hashes every byte NVRTC sees (main source and every header),
// the options, the name expressions and the NVRTC version, so a changed template, option or
// compiler never reuses a stale cubin. A batch compile stores one shared program under the
// key of every request it served. A persistent backend (the SQLite store) may sit behind the
// memory map: a miss in memory asks the backend before compiling.
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
