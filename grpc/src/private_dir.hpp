#pragma once

// Private to getcert::grpc: the 0700 directory a watcher keeps the PEM file in that gRPC or
// getcert's verification reads, and the atomic replacement of that file. One place, so the
// identity and the anchor watcher cannot drift apart on permissions or on torn writes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "getcert/error.hpp"

namespace getcert::grpc_tls::detail {

class PrivateDir {
 public:
  // Makes PARENT/PREFIX-XXXXXX with mkdtemp (so 0700 and not guessable). PARENT is
  // `configured_parent`, else $TMPDIR, else /tmp. Errors: io_error.
  static Result<PrivateDir> create(const std::string& configured_parent, std::string_view prefix);

  PrivateDir() = default;
  PrivateDir(PrivateDir&& other) noexcept;
  PrivateDir& operator=(PrivateDir&& other) noexcept;
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  ~PrivateDir();  // removes the directory and everything in it

  const std::string& path() const noexcept { return path_; }
  // The path of the file `name` in this directory.
  std::string file(std::string_view name) const;

  // Replaces the file `name` with `bytes`: a 0600 temp file in the directory, written and
  // fsync'ed, then renamed over it, so a reader sees the old version or the new one, never a
  // part, and each version is a new inode. With `mtime_seconds`, the file gets that
  // modification time before the rename. Errors: io_error.
  Result<void> replace(std::string_view name, std::string_view bytes,
                       std::optional<std::int64_t> mtime_seconds = std::nullopt) const;

 private:
  explicit PrivateDir(std::string path) : path_(std::move(path)) {}
  void remove() noexcept;

  std::string path_;  // empty: nothing to remove
};

}  // namespace getcert::grpc_tls::detail
