#pragma once

// Reading a named input file that no one can turn into a hang or an endless read: checked with
// fstat after the open (so a rename in between cannot swap the kind), opened non-blocking where
// only regular files are taken (a FIFO without a writer cannot stall the open), and read with a
// bound that holds while it reads (a device such as /dev/zero, or a file growing under us, stops
// at `limit`).
//
// Header-only, like the owners, so that every library and executable takes it without a link
// dependency on the internal objects.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "getcert/error.hpp"
#include "internal/owners.hpp"

namespace getcert::internal {

enum class FileKinds {
  // Regular files only: for what a long-running service reads again and again (configs, key
  // stores it watches, file:// targets), where a FIFO or a device would hang or flood it.
  regular,
  // Also pipes, FIFOs and character devices, read until end of file or `limit`: for one-shot
  // command-line inputs, so that `--ca-file <(kubectl ...)` keeps working.
  regular_or_stream,
};

// What a file is, in words, for a message ("a FIFO").
inline const char* file_kind_name(mode_t mode) noexcept {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// The whole file, at most `limit` bytes. `name` is how messages name it, already quoted
// ("CRL file 'x.pem'"). Errors: io_error (cannot open or read, a directory, a kind `kinds`
// refuses), limit_exceeded (over `limit`; the message says so in MiB when it is a whole number).
inline constexpr std::size_t kMiB = std::size_t{1024} * 1024;

inline Result<std::string> read_bounded_file(const std::string& path, std::size_t limit,
                                             const std::string& name, FileKinds kinds) {
  // Regular files only: opened non-blocking, so a FIFO without a writer is refused at once.
  // Streams allowed: a blocking open, which waits for a FIFO's writer as `cat` does.
  const int nonblock = kinds == FileKinds::regular ? O_NONBLOCK : 0;
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | nonblock));
  if (fd.get() < 0)
    return fail(Errc::io_error, "cannot read " + name + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(Errc::io_error, "cannot read " + name + ": " + std::strerror(errno));
  }
  const bool regular = S_ISREG(st.st_mode);
  const bool stream = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode);
  const std::string over =
      limit % kMiB == 0 ? std::to_string(limit / kMiB) + " MiB" : std::to_string(limit) + " bytes";
  if (!regular && !(stream && kinds == FileKinds::regular_or_stream)) {
    return fail(Errc::io_error, name + " is " + file_kind_name(st.st_mode) +
                                    ", not a regular file; give the path of a file");
  }
  if (regular && static_cast<std::size_t>(st.st_size) > limit) {
    return fail(Errc::limit_exceeded, name + " is larger than " + over);
  }
  std::string out;
  out.reserve(regular ? static_cast<std::size_t>(st.st_size) : 0);
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(Errc::io_error, "cannot read " + name + ": " + std::strerror(errno));
    }
    if (out.size() + static_cast<std::size_t>(n) > limit) {
      return fail(Errc::limit_exceeded, name + " is larger than " + over);
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace getcert::internal
