// The kernel_templates/ folder as it was at build time (cmake/EmbedTemplates.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace reducetune::embedded {

struct file {
  std::string_view path;    // relative to kernel_templates/, '/'-separated
  std::string_view content; // the file's bytes
};

[[nodiscard]] const std::vector<file> &files();

} // namespace reducetune::embedded
