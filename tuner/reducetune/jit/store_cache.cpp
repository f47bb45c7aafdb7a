#include "reducetune/jit/store_cache.hpp"

#include "reducetune/jit/nvrtc_program.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>

namespace reducetune {
namespace {

std::string join_lines(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &i : items)
    out += (out.empty() ? "" : "\n") + i;
  return out;
}

std::vector<std::string> split_lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

std::string arch_of(const std::vector<std::string> &options) {
  static const std::string flag = "--gpu-architecture=";
  for (const auto &o : options)
    if (o.rfind(flag, 0) == 0)
      return o.substr(flag.size());
  return {};
}

} // namespace

store_cache_backend::store_cache_backend(const std::filesystem::path &database)
    : m_store(db::store::open(database)) {}

std::optional<compiled_program> store_cache_backend::load(const std::string &key) {
  std::lock_guard lock(m_mutex);
  const auto build = m_store.find_build(key);
  // A remembered compile failure is not a program: the compiler compiles again and raises
  // the error with its log (the failure stays recorded for the study's history).
  if (!build || build->status != db::build_status::ok)
    return std::nullopt;
  compiled_program p;
  p.cubin.resize(build->cubin.size());
  std::memcpy(p.cubin.data(), build->cubin.data(), build->cubin.size());
  const nlohmann::json lowered = nlohmann::json::parse(build->lowered);
  for (auto it = lowered.begin(); it != lowered.end(); ++it)
    p.lowered.emplace(it.key(), it.value().get<std::string>());
  p.log = build->log;
  p.options = split_lines(build->options);
  p.compile_seconds = build->compile_seconds;
  p.key = key;
  return p;
}

void store_cache_backend::store(const std::string &key, const compiled_program &program) {
  db::build_record b;
  b.cache_key = key;
  b.program_key = program.key;
  b.arch = arch_of(program.options);
  b.nvrtc_version = nvrtc_program::nvrtc_version();
  b.options = join_lines(program.options);
  b.status = db::build_status::ok;
  b.log = program.log;
  b.compile_seconds = program.compile_seconds;
  b.cubin.resize(program.cubin.size());
  std::memcpy(b.cubin.data(), program.cubin.data(), program.cubin.size());
  nlohmann::json lowered = nlohmann::json::object();
  for (const auto &[expr, mangled] : program.lowered)
    lowered[expr] = mangled;
  b.lowered = lowered.dump();
  std::lock_guard lock(m_mutex);
  (void)m_store.record_build(b);
}

} // namespace reducetune
