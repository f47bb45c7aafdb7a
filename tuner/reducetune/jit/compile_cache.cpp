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
  if (auto program = load_stored(key)) {
    ++m_hits;
    return program;
  }
  ++m_misses;
  return nullptr;
}

std::shared_ptr<const compiled_program> compile_cache::load_stored(const std::string &key) {
  const auto stored_in = backend();
  if (!stored_in)
    return nullptr;
  auto stored = stored_in->load(key);
  if (!stored)
    return nullptr;
  auto program = std::make_shared<const compiled_program>(std::move(*stored));
  std::lock_guard lock(m_mutex);
  return m_programs.emplace(key, std::move(program)).first->second;
}

void compile_cache::insert(const std::string &key,
                           std::shared_ptr<const compiled_program> program) {
  if (const auto stored_in = backend())
    stored_in->store(key, *program);
  std::lock_guard lock(m_mutex);
  m_programs.insert_or_assign(key, std::move(program));
}

bool compile_cache::claim(const std::string &key) {
  const auto stored_in = backend();
  return !stored_in || stored_in->claim(key);
}

void compile_cache::release(const std::string &key) {
  if (const auto stored_in = backend())
    stored_in->release(key);
}

void compile_cache::set_backend(std::shared_ptr<cache_backend> backend) {
  std::lock_guard lock(m_mutex);
  m_backend = std::move(backend);
}

std::shared_ptr<cache_backend> compile_cache::backend() const {
  std::lock_guard lock(m_mutex);
  return m_backend;
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
