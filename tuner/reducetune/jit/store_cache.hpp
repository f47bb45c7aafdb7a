// The compile cache's persistent backend: builds (cubin, lowered names, log, options) in the
// SQLite store's rt_builds table, so that a cubin compiled by one process is loaded by the
// next without running NVRTC again.
#pragma once

#include "reducetune/db/store.hpp"
#include "reducetune/jit/compile_cache.hpp"

#include <filesystem>
#include <mutex>

namespace reducetune {

class store_cache_backend final : public cache_backend {
public:
  explicit store_cache_backend(const std::filesystem::path &database);

  [[nodiscard]] std::optional<compiled_program> load(const std::string &key) override;
  void store(const std::string &key, const compiled_program &program) override;

private:
  std::mutex m_mutex; // one SQLite connection, used from the compiler's worker threads
  db::store m_store;
};

} // namespace reducetune
