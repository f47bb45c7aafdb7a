// Where kernel template files come from: the copy embedded at build time, or a folder named by
// REDUCETUNE_TEMPLATE_DIR (for iterating on templates, or for a user's own families).
//
// Paths are relative to the template root and '/'-separated ("tunable/family.json",
// "common/rt_ops.cuh"). NVRTC receives the files a family includes as in-memory headers, so a
// compile never reads the file system and the cache key covers every byte that was compiled.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace reducetune {

class template_library {
public:
  // The library embedded in the binary.
  [[nodiscard]] static template_library embedded();
  // Every file under a folder (recursively), read now.
  [[nodiscard]] static template_library from_directory(const std::filesystem::path &root);
  // The embedded library with every file of a folder laid over it (a file of the folder
  // replaces the embedded file of the same path). User and test families live in such a
  // folder and include the shipped common/ headers without copying them.
  [[nodiscard]] static template_library embedded_with(const std::filesystem::path &overlay);
  // embedded_with(REDUCETUNE_TEMPLATE_DIR) when it is set, else the embedded library.
  [[nodiscard]] static template_library from_environment();

  // The content of one file, or nullopt.
  [[nodiscard]] std::optional<std::string> read(const std::string &path) const;
  // Every file whose path starts with prefix (e.g. "common/"), sorted by path.
  [[nodiscard]] std::vector<std::string> paths_under(const std::string &prefix) const;
  // The names of the folders that hold a family.json, sorted.
  [[nodiscard]] std::vector<std::string> families() const;
  // Where the files came from ("embedded" or the folder), for messages.
  [[nodiscard]] const std::string &origin() const noexcept { return m_origin; }

  // Adds or replaces one file (tests use this to build broken or faulting families).
  void put(std::string path, std::string content);

private:
  struct entry {
    std::string path;
    std::string content;
  };
  std::vector<entry> m_files; // sorted by path
  std::string m_origin;
};

} // namespace reducetune
