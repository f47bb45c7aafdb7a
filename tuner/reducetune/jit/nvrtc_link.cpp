#include "reducetune/jit/nvrtc_link.hpp"

#include "reducetune/errors.hpp"

#include <nvJitLink.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#ifndef RT_CUDA_LIBRARY_DIR
#define RT_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace reducetune {
namespace {

class link_handle {
public:
  explicit link_handle(const std::vector<std::string> &options) {
    std::vector<const char *> opts;
    for (const auto &o : options)
      opts.push_back(o.c_str());
    check(nvJitLinkCreate(&m_handle, static_cast<unsigned>(opts.size()), opts.data()),
          "nvJitLinkCreate");
  }
  ~link_handle() {
    if (m_handle)
      (void)nvJitLinkDestroy(&m_handle);
  }
  link_handle(const link_handle &) = delete;
  link_handle &operator=(const link_handle &) = delete;

  void check(nvJitLinkResult result, const char *call) const {
    if (result == NVJITLINK_SUCCESS)
      return;
    throw compile_error(std::string{"nvJitLink failed in "} + call + " (code " +
                            std::to_string(static_cast<int>(result)) + ")",
                        m_handle ? log() : std::string{});
  }
  [[nodiscard]] std::string log() const {
    size_t size = 0;
    if (nvJitLinkGetErrorLogSize(m_handle, &size) != NVJITLINK_SUCCESS || size == 0)
      return {};
    std::string text(size, '\0');
    (void)nvJitLinkGetErrorLog(m_handle, text.data());
    return text;
  }
  nvJitLinkHandle get() const { return m_handle; }

private:
  nvJitLinkHandle m_handle = nullptr;
};

} // namespace

std::string device_runtime_library() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    candidates.emplace_back(fs::path(home) / "lib64" / "libcudadevrt.a");
  candidates.emplace_back(fs::path(RT_CUDA_LIBRARY_DIR) / "libcudadevrt.a");
  candidates.emplace_back("/usr/local/cuda/lib64/libcudadevrt.a");
  for (const auto &c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec))
      return c.string();
  }
  return {};
}

std::string link_with_device_runtime(const std::string &cubin, const std::string &arch) {
  const std::string devrt = device_runtime_library();
  if (devrt.empty())
    throw compile_error("dynamic parallelism needs libcudadevrt.a, which was not found "
                        "(set CUDA_HOME to the CUDA toolkit)",
                        {});
  link_handle link({"-arch=" + arch});
  link.check(nvJitLinkAddData(link.get(), NVJITLINK_INPUT_CUBIN, cubin.data(), cubin.size(),
                              "program.cubin"),
             "nvJitLinkAddData");
  link.check(nvJitLinkAddFile(link.get(), NVJITLINK_INPUT_LIBRARY, devrt.c_str()),
             "nvJitLinkAddFile(libcudadevrt.a)");
  link.check(nvJitLinkComplete(link.get()), "nvJitLinkComplete");
  size_t size = 0;
  link.check(nvJitLinkGetLinkedCubinSize(link.get(), &size), "nvJitLinkGetLinkedCubinSize");
  std::string linked(size, '\0');
  link.check(nvJitLinkGetLinkedCubin(link.get(), linked.data()), "nvJitLinkGetLinkedCubin");
  return linked;
}

} // namespace reducetune
