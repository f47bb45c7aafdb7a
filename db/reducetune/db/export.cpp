#include "reducetune/db/export.hpp"

#include <fstream>

#include "reducetune/errors.hpp"

namespace reducetune::db {

void write_file_atomically(const std::filesystem::path &path, std::string_view content) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!f)
      throw store_error("cannot write '" + tmp.string() + "'");
  }
  std::filesystem::rename(tmp, path);
}

} // namespace reducetune::db
