// The compile cache's backend for applications: cubins in a folder of the user's cache, KEY.json
// per compile key (the lowered names, options, log, and the name of its cubin) and one IMAGE.cubin
// per program (a batch's program serves several keys: written once, not once a key), so that
// the runtime compiles a tuned point once per machine, not once per process.
//
// Why a folder and not the results database: an application opens its database read-only (it
// may be a shared or read-only file); the cache is the user's own, disposable state.
//
// The key (compiler::key_of) covers every source byte, option and NVRTC's version, so a file
// is never stale. Files are written under a temporary name and renamed, so that concurrent
// processes see a whole file or none. Failing to read or write the folder only costs a
// compile: load() answers nothing and store() does nothing.
#pragma once

#include "reducetune/jit/compile_cache.hpp"

#include <filesystem>

namespace reducetune {

class folder_cache_backend final : public cache_backend {
public:
  explicit folder_cache_backend(std::filesystem::path folder);

  // $REDUCETUNE_CACHE_DIR, else $XDG_CACHE_HOME/reducetune/cubin, else
  // ~/.cache/reducetune/cubin; "" when none of them can be named (no HOME).
  [[nodiscard]] static std::filesystem::path default_folder();

  [[nodiscard]] std::optional<compiled_program> load(const std::string &key) override;
  void store(const std::string &key, const compiled_program &program) override;
  [[nodiscard]] bool claim(const std::string &key) override;
  void release(const std::string &key) override;

  [[nodiscard]] const std::filesystem::path &folder() const noexcept { return m_folder; }

private:
  std::filesystem::path m_folder;
};

} // namespace reducetune
