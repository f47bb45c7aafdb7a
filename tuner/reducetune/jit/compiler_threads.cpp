// The compiler's compiles that several threads may ask for at once: an evaluation's compile()
// and jit/compile_ahead's background threads. Each request compiling has an in-flight entry
// (its program's future), so that a second asker joins it instead of compiling it again.
#include "reducetune/jit/compiler.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compile_cache.hpp"

#include <algorithm>

namespace reducetune {

std::shared_ptr<const compiled_program>
compiler::compile_unless_busy(const compile_request &request) {
  return obtain(request, false);
}

std::optional<compiler::pending_program> compiler::inflight(const std::string &key) {
  std::lock_guard lock(m_inflight_mutex);
  const auto it = m_inflight.find(key);
  return it == m_inflight.end() ? std::nullopt : std::optional<pending_program>(it->second);
}

bool compiler::holds(const compile_request &request) {
  return m_cache->peek(key_of(request)) != nullptr;
}

// The cache's program, else the compile in progress of another thread (joined, or null
// without `join`), else compiled here. The program enters the cache before its in-flight
// entry leaves, and a miss looks at the cache again under the in-flight lock: a request is
// never compiled twice however the threads interleave.
std::shared_ptr<const compiled_program> compiler::obtain(const compile_request &request,
                                                         bool join) {
  const std::string key = key_of(request);
  if (auto hit = m_cache->find(key)) return hit;
  std::promise<std::shared_ptr<const compiled_program>> promise;
  {
    std::unique_lock lock(m_inflight_mutex);
    if (const auto it = m_inflight.find(key); it != m_inflight.end()) {
      if (!join) return nullptr;
      const pending_program pending = it->second;
      lock.unlock();
      ++m_joined;
      return pending.get(); // the other thread's compile_error, with its log, if it failed
    }
    if (auto done = m_cache->peek(key)) return done;
    m_inflight.emplace(key, promise.get_future().share());
  }
  // Said to the processes sharing the backend, whose background threads then leave it to this
  // one; compiled here whatever the answer (an evaluation never waits for another process).
  const bool claimed = m_cache->claim(key);
  const auto settle = [&] {
    if (claimed) m_cache->release(key);
    std::lock_guard lock(m_inflight_mutex);
    m_inflight.erase(key);
  };
  try {
    compiled_program program = compile_now(bundle_for(request), {&request});
    program.key = key;
    auto shared = std::make_shared<const compiled_program>(std::move(program));
    m_cache->insert(key, shared);
    promise.set_value(shared);
    settle();
    return shared;
  } catch (...) {
    promise.set_exception(std::current_exception());
    settle();
    throw;
  }
}

compiler::group_outcome
compiler::compile_group_unless_busy(const std::vector<compile_request> &group) {
  group_outcome out;
  std::vector<std::string> all_keys;
  std::vector<bool> stored; // another process compiled it: loaded (file reads: before the lock)
  for (const auto &r : group) {
    all_keys.push_back(key_of(r));
    stored.push_back(!m_cache->peek(all_keys.back()) && m_cache->load_stored(all_keys.back()));
  }
  std::vector<const compile_request *> mine;
  std::vector<std::string> keys;
  std::vector<std::promise<program_ptr>> promises(group.size());
  {
    std::lock_guard lock(m_inflight_mutex);
    for (std::size_t i = 0; i < group.size(); ++i) {
      if (stored[i]) {
        ++out.loaded;
        continue;
      }
      // here or elsewhere (another process's claim, released once its program is stored)
      if (m_inflight.count(all_keys[i]) || m_cache->peek(all_keys[i]) ||
          std::find(keys.begin(), keys.end(), all_keys[i]) != keys.end() ||
          !m_cache->claim(all_keys[i])) {
        ++out.skipped;
        continue;
      }
      m_inflight.emplace(all_keys[i], promises[keys.size()].get_future().share());
      mine.push_back(&group[i]);
      keys.push_back(all_keys[i]);
    }
  }
  const auto settle = [&] {
    for (const auto &k : keys) m_cache->release(k); // after the programs were stored
    std::lock_guard lock(m_inflight_mutex);
    for (const auto &k : keys) m_inflight.erase(k);
  };
  try {
    if (!mine.empty())
      compile_together(
          mine, keys,
          [&](std::size_t j, program_ptr p) {
            promises[j].set_value(std::move(p));
            ++out.compiled;
          },
          [&](std::size_t j, const std::exception &) {
            promises[j].set_exception(std::current_exception());
            ++out.failed;
          });
  } catch (...) { // not NVRTC's refusal (compile_together keeps those as data): no memory
    settle();
    throw;
  }
  settle();
  return out;
}

} // namespace reducetune
