#include "reducetune/jit/compile_cache.hpp"

namespace reducetune {

std::shared_ptr<const compiled_program> compile_cache::find(const std::string &key) {
  {
    std::lock_guard lock(m_mutex);
    if (const auto it = m_programs.find(key); it != m_programs.end()) {
      ++m_hits;
      return it->second;
    }
  }
  if (m_backend) {
    if (auto stored = m_backend->load(key)) {
      auto program = std::make_shared<const compiled_program>(std::move(*stored));
      std::lock_guard lock(m_mutex);
      m_programs.emplace(key, program);
      ++m_hits;
      return program;
    }
  }
  ++m_misses;
  return nullptr;
}

void compile_cache::insert(const std::string &key,
                           std::shared_ptr<const compiled_program> program) {
  if (m_backend)
    m_backend->store(key, *program);
  std::lock_guard lock(m_mutex);
  m_programs.insert_or_assign(key, std::move(program));
}

std::shared_ptr<const compiled_program> compile_cache::peek(const std::string &key) const {
  std::lock_guard lock(m_mutex);
  const auto it = m_programs.find(key);
  return it == m_programs.end() ? nullptr : it->second;
}

std::size_t compile_cache::size() const {
  std::lock_guard lock(m_mutex);
  return m_programs.size();
}

void compile_cache::clear_memory() {
  std::lock_guard lock(m_mutex);
  m_programs.clear();
}

} // namespace reducetune
