#include "reducetune/db/export.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "reducetune/db/read_only.hpp"
#include "reducetune/errors.hpp"

namespace reducetune::db {
namespace {

[[noreturn]] void cannot_write(const std::filesystem::path &path, const std::string &why) {
  throw store_error("cannot write '" + path.string() + "': " + why);
}

// Writes all of content to fd; false (errno set) on failure.
bool write_all(int fd, std::string_view content) {
  const char *p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// A new file beside path with a name of its own (O_EXCL: never someone's NAME.tmp), created
// with mode 0666 less the umask, as any new file; -1 (errno set) on failure.
int create_temporary(const std::filesystem::path &path, std::string &name) {
  std::random_device seed;
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = (path.parent_path() / ("." + path.filename().string() + "." +
                                  std::to_string(::getpid()) + "." + std::to_string(seed())))
               .string();
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

} // namespace

// A read-only target or folder is refused (by its mode bits, whoever runs this); the temporary
// file takes the replaced file's mode and is removed when anything fails, so a failure leaves
// the folder as it was.
void write_file_atomically(const std::filesystem::path &path, std::string_view content) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  const bool exists = !ec && std::filesystem::exists(status);
  if (exists && !std::filesystem::is_regular_file(status))
    cannot_write(path, "not a regular file");
  if (exists && !detail::writable(path))
    cannot_write(path, "it is read-only");
  const auto folder = std::filesystem::absolute(path).parent_path();
  if (!detail::writable(folder))
    cannot_write(path, "its folder is read-only or missing");
  std::string tmp;
  const int fd = create_temporary(folder / path.filename(), tmp);
  if (fd < 0)
    cannot_write(path, std::strerror(errno));
  struct stat st {};
  const bool keep_mode = exists && ::stat(path.c_str(), &st) == 0;
  const bool ok = write_all(fd, content) && (!keep_mode || ::fchmod(fd, st.st_mode & 07777) == 0) &&
                  ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = ok ? errno : saved;
    ::unlink(tmp.c_str());
    cannot_write(path, std::strerror(err));
  }
}

} // namespace reducetune::db
