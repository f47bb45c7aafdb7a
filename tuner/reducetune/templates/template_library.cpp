#include "reducetune/templates/template_library.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/templates/embedded_templates.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace reducetune {

template_library template_library::embedded() {
  template_library lib;
  lib.m_origin = "embedded";
  for (const auto &f : embedded::files())
    lib.put(std::string{f.path}, std::string{f.content});
  return lib;
}

template_library template_library::from_directory(const std::filesystem::path &root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw invalid_configuration("template folder '" + root.string() +
                                "' does not exist or is not a folder");
  template_library lib;
  lib.m_origin = root.string();
  for (const auto &item : fs::recursive_directory_iterator(root)) {
    if (!item.is_regular_file())
      continue;
    std::ifstream in(item.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    lib.put(fs::relative(item.path(), root).generic_string(), text.str());
  }
  return lib;
}

template_library template_library::embedded_with(const std::filesystem::path &overlay) {
  template_library lib = embedded();
  const template_library extra = from_directory(overlay);
  for (const auto &e : extra.m_files)
    lib.put(e.path, e.content);
  lib.m_origin = "embedded + " + extra.m_origin;
  return lib;
}

template_library template_library::from_environment() {
  if (const char *dir = std::getenv("REDUCETUNE_TEMPLATE_DIR"); dir && *dir)
    return embedded_with(dir);
  return embedded();
}

std::optional<std::string> template_library::read(const std::string &path) const {
  const auto it = std::lower_bound(m_files.begin(), m_files.end(), path,
                                   [](const entry &e, const std::string &p) { return e.path < p; });
  if (it == m_files.end() || it->path != path)
    return std::nullopt;
  return it->content;
}

std::vector<std::string> template_library::paths_under(const std::string &prefix) const {
  std::vector<std::string> out;
  for (const auto &e : m_files)
    if (e.path.compare(0, prefix.size(), prefix) == 0)
      out.push_back(e.path);
  return out;
}

std::vector<std::string> template_library::families() const {
  static const std::string suffix = "/family.json";
  std::vector<std::string> out;
  for (const auto &e : m_files) {
    if (e.path.size() > suffix.size() &&
        e.path.compare(e.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string folder = e.path.substr(0, e.path.size() - suffix.size());
      if (folder.find('/') == std::string::npos)
        out.push_back(folder);
    }
  }
  return out;
}

void template_library::put(std::string path, std::string content) {
  const auto it = std::lower_bound(m_files.begin(), m_files.end(), path,
                                   [](const entry &e, const std::string &p) { return e.path < p; });
  if (it != m_files.end() && it->path == path)
    it->content = std::move(content);
  else
    m_files.insert(it, entry{std::move(path), std::move(content)});
}

} // namespace reducetune
