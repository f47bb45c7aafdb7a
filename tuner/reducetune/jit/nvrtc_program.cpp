#include "reducetune/jit/nvrtc_program.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

nvrtc_program::nvrtc_program(const std::string &source, const std::string &name,
                             const std::vector<header_file> &headers) {
  std::vector<const char *> contents;
  std::vector<const char *> names;
  contents.reserve(headers.size());
  names.reserve(headers.size());
  for (const auto &h : headers) {
    contents.push_back(h.content.c_str());
    names.push_back(h.name.c_str());
  }
  RT_NVRTC_CALL(nvrtcCreateProgram(&m_prog, source.c_str(), name.c_str(),
                                   static_cast<int>(headers.size()), contents.data(),
                                   names.data()));
}

nvrtc_program::~nvrtc_program() {
  if (m_prog)
    (void)nvrtcDestroyProgram(&m_prog);
}

nvrtc_program &nvrtc_program::operator=(nvrtc_program &&other) noexcept {
  if (this != &other) {
    if (m_prog)
      (void)nvrtcDestroyProgram(&m_prog);
    m_prog = std::exchange(other.m_prog, nullptr);
  }
  return *this;
}

void nvrtc_program::add_name_expression(const std::string &expr) {
  RT_NVRTC_CALL(nvrtcAddNameExpression(m_prog, expr.c_str()));
}

bool nvrtc_program::compile(const std::vector<std::string> &options) {
  std::vector<const char *> opts;
  opts.reserve(options.size());
  for (const auto &o : options)
    opts.push_back(o.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(m_prog, static_cast<int>(opts.size()), opts.data());
  if (result == NVRTC_SUCCESS)
    return true;
  if (result == NVRTC_ERROR_COMPILATION)
    return false; // the caller reads the log and raises compile_error with it
  RT_NVRTC_CALL(result);
  return false;
}

std::string nvrtc_program::log() const {
  size_t size = 0;
  RT_NVRTC_CALL(nvrtcGetProgramLogSize(m_prog, &size));
  std::string text(size, '\0');
  if (size > 0)
    RT_NVRTC_CALL(nvrtcGetProgramLog(m_prog, text.data()));
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
    text.pop_back();
  return text;
}

std::string nvrtc_program::cubin() const {
  size_t size = 0;
  RT_NVRTC_CALL(nvrtcGetCUBINSize(m_prog, &size));
  std::string image(size, '\0');
  RT_NVRTC_CALL(nvrtcGetCUBIN(m_prog, image.data()));
  return image;
}

std::string nvrtc_program::lowered_name(const std::string &expr) const {
  const char *lowered = nullptr;
  RT_NVRTC_CALL(nvrtcGetLoweredName(m_prog, expr.c_str(), &lowered));
  return lowered;
}

std::string nvrtc_program::nvrtc_version() {
  int major = 0, minor = 0;
  RT_NVRTC_CALL(nvrtcVersion(&major, &minor));
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace reducetune
