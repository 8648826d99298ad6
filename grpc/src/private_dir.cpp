#include "private_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

namespace getcert::grpc_tls::detail {

Result<PrivateDir> PrivateDir::create(const std::string& configured_parent,
                                      std::string_view prefix) {
  std::string parent = configured_parent;
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string dir = parent + "/" + std::string(prefix) + "-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    return fail(Errc::io_error,
                "cannot create a private directory in " + parent + ": " + std::strerror(errno));
  }
  return PrivateDir(std::move(dir));
}

PrivateDir::PrivateDir(PrivateDir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

PrivateDir& PrivateDir::operator=(PrivateDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

PrivateDir::~PrivateDir() { remove(); }

void PrivateDir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  path_.clear();
}

std::string PrivateDir::file(std::string_view name) const {
  return path_ + "/" + std::string(name);
}

Result<void> PrivateDir::replace(std::string_view name, std::string_view bytes,
                                 std::optional<std::int64_t> mtime_seconds) const {
  const std::string target = file(name);
  std::string tmp = path_ + "/." + std::string(name) + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    return fail(Errc::io_error, "cannot create a file in " + path_ + ": " + std::strerror(errno));
  }
  bool ok = ::fchmod(fd, 0600) == 0;
  std::size_t done = 0;
  while (ok && done < bytes.size()) {
    const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    ok = wrote > 0;
    if (ok) done += static_cast<std::size_t>(wrote);
  }
  ok = ok && ::fsync(fd) == 0;
  if (mtime_seconds) {
    const struct timespec times[2] = {{static_cast<time_t>(*mtime_seconds), 0},
                                      {static_cast<time_t>(*mtime_seconds), 0}};
    ok = ok && ::futimens(fd, times) == 0;
  }
  const int err = errno;
  ::close(fd);
  if (ok && ::rename(tmp.c_str(), target.c_str()) == 0) return {};
  const int rename_err = ok ? errno : err;
  ::unlink(tmp.c_str());
  return fail(Errc::io_error, "cannot write " + target + ": " + std::strerror(rename_err));
}

}  // namespace getcert::grpc_tls::detail
