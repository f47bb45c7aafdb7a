#include "reducetune/jit/compiler.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/jit/compile_cache.hpp"
#include "reducetune/jit/content_hash.hpp"
#include "reducetune/jit/nvrtc_link.hpp"
#include "reducetune/jit/nvrtc_program.hpp"
#include "reducetune/jit/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <set>

namespace reducetune {

struct compiler::bundle {
  std::string path;
  std::string source;
  std::vector<header_file> headers;
  std::string hash; // of the source and every header, names included
};

namespace {

bool is_header(const std::string &path) {
  const auto ends_with = [&](const char *s) {
    const std::string suffix{s};
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".cuh") || ends_with(".h") || ends_with(".hpp");
}

std::string folder_of(const std::string &path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string{} : path.substr(0, slash + 1);
}

std::string join_lines(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &i : items)
    out += "  " + i + "\n";
  return out;
}

} // namespace

const std::string &compiled_program::mangled(const std::string &name_expression) const {
  const auto it = lowered.find(name_expression);
  if (it == lowered.end())
    throw invalid_configuration("the compiled program has no kernel for the name expression '" +
                                name_expression + "'");
  return it->second;
}

compiler::compiler(template_library library, std::shared_ptr<compile_cache> cache)
    : m_library(std::move(library)),
      m_cache(cache ? std::move(cache) : std::make_shared<compile_cache>()),
      m_nvrtc_version(nvrtc_program::nvrtc_version()) {}

const compiler::bundle &compiler::bundle_for(const compile_request &request) {
  const std::string &source_path = request.source_path;
  std::vector<std::string> folders = request.include_folders;
  if (folders.empty())
    folders = {"common"};
  folders.push_back(folder_of(source_path));
  std::string bundle_key = source_path;
  for (const auto &f : folders)
    bundle_key += "\n" + f;
  std::lock_guard lock(m_bundles_mutex);
  if (const auto it = m_bundles.find(bundle_key); it != m_bundles.end())
    return *it->second;
  auto source = m_library.read(source_path);
  if (!source)
    throw invalid_configuration("no template source '" + source_path + "' in the template library (" +
                                m_library.origin() + ")");
  auto b = std::make_shared<bundle>();
  b->path = source_path;
  b->source = std::move(*source);
  // Every header of the included folders and of the source's own folder is offered to NVRTC
  // under its library path; templates include them by that path.
  std::set<std::string> names;
  for (const auto &folder : folders) {
    const std::string prefix =
        folder.empty() || folder.back() == '/' ? folder : folder + "/";
    for (const auto &p : m_library.paths_under(prefix))
      names.insert(p);
  }
  content_hash h;
  h.field(source_path).field(b->source);
  for (const auto &name : names) {
    if (!is_header(name) || name == source_path)
      continue;
    header_file file{name, *m_library.read(name)};
    h.field(file.name).field(file.content);
    b->headers.push_back(std::move(file));
  }
  b->hash = h.hex();
  return *m_bundles.emplace(bundle_key, std::move(b)).first->second;
}

std::vector<std::string> compiler::options_for(const compile_request &request) const {
  std::vector<std::string> options{"--gpu-architecture=" + request.arch, "-std=c++17",
                                   "-DRT_NVRTC=1"};
  // -minimal drops the runtime-API declarations, textures and device-side launch from NVRTC's
  // built-in prelude, which the self-contained templates never use; it shortens every
  // front-end pass. Device-runtime families (rdc) need those declarations.
  if (request.rdc)
    options.emplace_back("-rdc=true");
  else
    options.emplace_back("-minimal");
  options.insert(options.end(), request.extra_options.begin(), request.extra_options.end());
  return options;
}

std::string compiler::key_of(const compile_request &request) {
  const bundle &b = bundle_for(request);
  content_hash h;
  h.field(b.hash).field(m_nvrtc_version);
  for (const auto &o : options_for(request))
    h.field(o);
  std::vector<std::string> names = request.name_expressions;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto &n : names)
    h.field(n);
  return h.hex();
}

compiled_program compiler::compile_now(const bundle &b,
                                       const std::vector<const compile_request *> &group) {
  const auto start = std::chrono::steady_clock::now();
  ++m_programs_compiled;
  const compile_request &first = *group.front();
  std::set<std::string> names;
  for (const auto *r : group)
    names.insert(r->name_expressions.begin(), r->name_expressions.end());

  nvrtc_program program(b.source, b.path, b.headers);
  for (const auto &n : names)
    program.add_name_expression(n);
  compiled_program out;
  out.options = options_for(first);
  const bool ok = program.compile(out.options);
  out.log = program.log();
  if (!ok) {
    throw compile_error("NVRTC could not compile '" + b.path + "' for " + first.arch +
                            "\noptions:\n" + join_lines(out.options) + "name expressions:\n" +
                            join_lines({names.begin(), names.end()}),
                        out.log);
  }
  for (const auto &n : names)
    out.lowered.emplace(n, program.lowered_name(n));
  out.cubin = program.cubin();
  if (first.rdc)
    out.cubin = link_with_device_runtime(out.cubin, first.arch);
  out.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::shared_ptr<const compiled_program> compiler::compile(const compile_request &request) {
  return obtain(request, true);
}

std::string compiler::program_group(const compile_request &request) const {
  std::string group = request.source_path + "\n";
  for (const auto &f : request.include_folders)
    group += "include " + f + "\n";
  for (const auto &o : options_for(request))
    group += o + "\n";
  return group;
}

void compiler::compile_together(
    const std::vector<const compile_request *> &group, const std::vector<std::string> &keys,
    const std::function<void(std::size_t, program_ptr)> &done,
    const std::function<void(std::size_t, const std::exception &)> &failed) {
  const bundle &b = bundle_for(*group.front());
  const auto give = [&](std::size_t j, compiled_program program) {
    program.key = keys[j];
    auto shared = std::make_shared<const compiled_program>(std::move(program));
    m_cache->insert(keys[j], shared);
    done(j, std::move(shared));
  };
  try {
    compiled_program program = compile_now(b, group);
    program.key = keys.front();
    auto shared = std::make_shared<const compiled_program>(std::move(program));
    for (std::size_t j = 0; j < group.size(); ++j) {
      m_cache->insert(keys[j], shared);
      done(j, shared);
    }
    return;
  } catch (const error &e) {
    if (group.size() == 1) {
      failed(0, e);
      return;
    }
  }
  // One bad instantiation fails the whole program: retry one by one so that each
  // failure is attributed to its own request and the others still compile.
  for (std::size_t j = 0; j < group.size(); ++j) {
    try {
      give(j, compile_now(b, {group[j]}));
    } catch (const error &e) {
      failed(j, e);
    }
  }
}

std::vector<compile_outcome> compiler::compile_batch(const std::vector<compile_request> &requests,
                                                     const batch_options &options) {
  std::vector<compile_outcome> outcomes(requests.size());
  std::vector<std::string> keys(requests.size());

  // Requests that can share one NVRTC program: same source, architecture and options.
  std::map<std::string, std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> first_with_key; // identical requests compile once
  std::vector<std::pair<std::size_t, std::size_t>> duplicates;
  std::vector<std::pair<std::size_t, pending_program>> joining;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    keys[i] = key_of(requests[i]);
    if (auto hit = m_cache->find(keys[i])) {
      outcomes[i].program = std::move(hit);
      outcomes[i].cached = true;
      continue;
    }
    if (const auto it = first_with_key.find(keys[i]); it != first_with_key.end()) {
      duplicates.emplace_back(i, it->second);
      continue;
    }
    if (auto pending = inflight(keys[i])) { // compile() compiles it: joined below
      joining.emplace_back(i, std::move(*pending));
      continue;
    }
    first_with_key.emplace(keys[i], i);
    groups[program_group(requests[i])].push_back(i);
  }

  thread_pool pool(options.threads);
  std::vector<std::future<void>> pending;
  const std::size_t chunk = std::max(1u, options.max_requests_per_program);
  for (const auto &[group_key, members] : groups) {
    for (std::size_t begin = 0; begin < members.size(); begin += chunk) {
      std::vector<std::size_t> part(members.begin() + static_cast<std::ptrdiff_t>(begin),
                                    members.begin() + static_cast<std::ptrdiff_t>(
                                                          std::min(members.size(), begin + chunk)));
      pending.push_back(pool.submit([this, part, &requests, &outcomes, &keys] {
        std::vector<const compile_request *> group;
        std::vector<std::string> part_keys;
        for (const auto i : part) {
          group.push_back(&requests[i]);
          part_keys.push_back(keys[i]);
        }
        compile_together(
            group, part_keys,
            [&](std::size_t j, program_ptr p) { outcomes[part[j]].program = std::move(p); },
            [&](std::size_t j, const std::exception &e) { outcomes[part[j]].error = e.what(); });
      }));
    }
  }
  for (auto &p : pending)
    p.get();
  for (auto &[i, program] : joining) {
    ++m_joined;
    try {
      outcomes[i].program = program.get();
    } catch (const error &e) {
      outcomes[i].error = e.what();
    }
  }
  for (const auto &[dup, original] : duplicates)
    outcomes[dup] = outcomes[original];
  return outcomes;
}

} // namespace reducetune
