// Move-only owner of one nvrtcProgram: create with in-memory headers, register name
// expressions, compile, read the log, the cubin and the lowered names.
#pragma once

#include <nvrtc.h>

#include <string>
#include <utility>
#include <vector>

namespace reducetune {

struct header_file {
  std::string name;    // the include name templates use, e.g. "common/rt_ops.cuh"
  std::string content;
};

class nvrtc_program {
public:
  nvrtc_program(const std::string &source, const std::string &name,
                const std::vector<header_file> &headers);
  ~nvrtc_program();
  nvrtc_program(nvrtc_program &&other) noexcept : m_prog(std::exchange(other.m_prog, nullptr)) {}
  nvrtc_program &operator=(nvrtc_program &&other) noexcept;
  nvrtc_program(const nvrtc_program &) = delete;
  nvrtc_program &operator=(const nvrtc_program &) = delete;

  void add_name_expression(const std::string &expr);
  // Returns true on success; the log is read either way (CUB's habit: log before result).
  [[nodiscard]] bool compile(const std::vector<std::string> &options);
  [[nodiscard]] std::string log() const;
  [[nodiscard]] std::string cubin() const;
  [[nodiscard]] std::string lowered_name(const std::string &expr) const;

  // "13.0" — part of every cache key, so a new NVRTC never reuses an old cubin.
  [[nodiscard]] static std::string nvrtc_version();

private:
  nvrtcProgram m_prog = nullptr;
};

} // namespace reducetune
