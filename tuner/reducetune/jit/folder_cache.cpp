#include "reducetune/jit/folder_cache.hpp"

#include "reducetune/jit/content_hash.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace reducetune {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_all(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return std::nullopt;
  return bytes;
}

// Whole file or nothing: a reader never sees a half-written cubin.
bool write_atomically(const fs::path &p, const std::string &bytes) {
  std::random_device rd;
  const fs::path tmp = p.string() + ".tmp" + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec)
    fs::remove(tmp, ec);
  return !ec;
}

// A key is hex from compiler::key_of; anything else is refused rather than used as a path.
bool plain_key(const std::string &key) {
  if (key.empty() || key.size() > 128)
    return false;
  for (const char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      return false;
  return true;
}

// The name of a program's cubin: what NVRTC was given (the key of its first request covers the
// source, headers, options and NVRTC's version; the lowered names, every instantiation of the
// batch), so that one name is one image, whichever process wrote it.
std::string image_name(const compiled_program &program) {
  content_hash h;
  h.field(program.key);
  for (const auto &[expression, mangled] : program.lowered)
    h.field(expression).field(mangled);
  return h.hex();
}

} // namespace

folder_cache_backend::folder_cache_backend(fs::path folder) : m_folder(std::move(folder)) {}

fs::path folder_cache_backend::default_folder() {
  if (const char *dir = std::getenv("REDUCETUNE_CACHE_DIR"); dir && *dir)
    return fs::path(dir);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "reducetune" / "cubin";
  if (const char *home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "reducetune" / "cubin";
  return {};
}

std::optional<compiled_program> folder_cache_backend::load(const std::string &key) {
  if (m_folder.empty() || !plain_key(key))
    return std::nullopt;
  const auto meta = read_all(m_folder / (key + ".json"));
  if (!meta)
    return std::nullopt;
  const auto j = nlohmann::json::parse(*meta, nullptr, false);
  if (!j.is_object() || !j.contains("lowered") || !j["lowered"].is_object())
    return std::nullopt; // a damaged entry is a miss; store() replaces it
  const std::string image = j.contains("cubin") && j["cubin"].is_string()
                                ? j["cubin"].get<std::string>()
                                : key; // an entry written before 2026-11-27: KEY.cubin
  const auto cubin = plain_key(image) ? read_all(m_folder / (image + ".cubin")) : std::nullopt;
  if (!cubin || cubin->empty())
    return std::nullopt;
  compiled_program p;
  p.cubin = *cubin;
  for (const auto &[expr, name] : j["lowered"].items())
    if (name.is_string())
      p.lowered.emplace(expr, name.get<std::string>());
  if (j.contains("options") && j["options"].is_array())
    for (const auto &o : j["options"])
      if (o.is_string())
        p.options.push_back(o.get<std::string>());
  p.log = j.value("log", "");
  p.compile_seconds = j.value("compile_seconds", 0.0);
  p.key = key;
  return p;
}

void folder_cache_backend::store(const std::string &key, const compiled_program &program) {
  if (m_folder.empty() || !plain_key(key))
    return;
  std::error_code ec;
  fs::create_directories(m_folder, ec);
  if (ec)
    return;
  nlohmann::json j;
  j["lowered"] = program.lowered;
  j["options"] = program.options;
  j["log"] = program.log;
  j["compile_seconds"] = program.compile_seconds;
  j["cubin"] = image_name(program);
  // The cubin first: load() needs both files, and the metadata names a complete cubin. A
  // program that serves several keys (a batch's) is written once, not once a key.
  const fs::path image = m_folder / (j["cubin"].get<std::string>() + ".cubin");
  if (fs::exists(image, ec) || write_atomically(image, program.cubin))
    (void)write_atomically(m_folder / (key + ".json"), j.dump());
}

bool folder_cache_backend::claim(const std::string &key) {
  if (m_folder.empty() || !plain_key(key))
    return true; // no folder: nobody else can be compiling into it
  std::error_code ec;
  fs::create_directories(m_folder, ec);
  const int fd = ::open((m_folder / (key + ".claim")).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd >= 0) {
    const std::string pid = std::to_string(::getpid()); // who holds it, for a reader
    (void)!::write(fd, pid.data(), pid.size());
    ::close(fd);
    return true;
  }
  return errno != EEXIST; // an unwritable folder claims nothing: compile here
}

void folder_cache_backend::release(const std::string &key) {
  if (m_folder.empty() || !plain_key(key))
    return;
  std::error_code ec;
  fs::remove(m_folder / (key + ".claim"), ec);
}

} // namespace reducetune
