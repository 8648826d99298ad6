#include "safe_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "internal/owners.hpp"

namespace getcert::cli {
namespace {

std::string errno_text() { return std::strerror(errno); }

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

struct TempFile {
  std::string path;
  bool committed = false;
};

Result<void> write_temp(const PendingFile& file, TempFile& temp) {
  std::string name = file.path + ".tmp-XXXXXX";
  internal::UniqueFd out(::mkostemp(name.data(), O_CLOEXEC));
  const int fd = out.get();
  if (fd < 0) {
    return fail(Errc::io_error,
                "cannot create a file in '" + parent_of(file.path) + "': " + errno_text());
  }
  temp.path = name;
  // mkostemp creates 0600; widen only what is meant to be readable.
  bool ok = ::fchmod(fd, file.mode) == 0;
  std::size_t off = 0;
  while (ok && off < file.content.size()) {
    const ssize_t n = ::write(fd, file.content.data() + off, file.content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<std::size_t>(n);
  }
  const std::string why = errno_text();
  ok = out.close() && ok;  // a write can fail only at close (NFS, quotas)
  if (!ok) return fail(Errc::io_error, "cannot write '" + file.path + "': " + why);
  return {};
}

// Flushes the written temporaries to disk before any is moved into place: one syncfs(2) per
// file system instead of one fsync(2) per file. A hundred .p12 files give five hundred
// outputs, and their fsyncs (a journal commit each) took three times the decoding itself.
Result<void> sync_file_systems(const std::vector<TempFile>& temps) {
  std::vector<dev_t> synced;
  for (const auto& t : temps) {
    struct stat st {};
    if (::stat(t.path.c_str(), &st) != 0) {
      return fail(Errc::io_error, "cannot write '" + t.path + "': " + errno_text());
    }
    if (std::find(synced.begin(), synced.end(), st.st_dev) != synced.end()) continue;
    internal::UniqueFd file(::open(t.path.c_str(), O_RDONLY | O_CLOEXEC));
    bool ok = file.get() >= 0 && ::syncfs(file.get()) == 0;
    const std::string why = errno_text();
    if (file.get() >= 0) ok = file.close() && ok;
    if (!ok) return fail(Errc::io_error, "cannot write '" + parent_of(t.path) + "': " + why);
    synced.push_back(st.st_dev);
  }
  return {};
}

// A second name for `path` (a hard link next to it), free until this returns it.
Result<std::string> backup_link(const std::string& path) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string name = path + ".old-XXXXXX";
    if (internal::UniqueFd(::mkostemp(name.data(), O_CLOEXEC)).get() < 0) break;
    (void)::unlink(name.c_str());
    if (::link(path.c_str(), name.c_str()) == 0) return name;
    if (errno != EEXIST) break;
  }
  return fail(Errc::io_error, "cannot keep the old '" + path +
                                  "' until its replacement is in place: " + errno_text() +
                                  "; nothing was replaced");
}

}  // namespace

Result<void> ensure_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return {};
    return fail(Errc::io_error, "'" + dir + "' exists and is not a directory");
  }
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return fail(Errc::io_error, "cannot create directory '" + dir + "': " + errno_text());
  }
  return {};
}

Result<void> write_files_atomically(const std::vector<PendingFile>& files, bool force,
                                    const std::vector<std::string>& directories) {
  // A subfolder getcert names inside --out-dir must be a folder of its own: through a symbolic
  // link, --force would replace files somewhere else entirely. (--out-dir itself was named by
  // the user, who may well point it through a link.)
  for (std::size_t i = 1; i < directories.size(); ++i) {
    struct stat st {};
    if (::lstat(directories[i].c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return fail(Errc::io_error,
                  "'" + directories[i] +
                      "' is a symbolic link; refusing to write through it, "
                      "nothing was written (remove it or choose another --out-dir)");
    }
  }
  for (const auto& f : files) {
    struct stat st {};
    if (::lstat(f.path.c_str(), &st) != 0) continue;
    if (!force) {
      return fail(Errc::output_exists,
                  "'" + f.path + "' already exists; nothing was written (use --force to replace)");
    }
    // rename(2) cannot put a file over a directory: found now, before anything is replaced.
    if (S_ISDIR(st.st_mode)) {
      return fail(Errc::io_error, "'" + f.path +
                                      "' is a directory, so it cannot be replaced; nothing was "
                                      "written");
    }
  }
  // Created only now, so that a refused run leaves no empty directories behind either.
  std::vector<std::string> created;  // newest first, so that rmdir meets children first
  for (const auto& dir : directories) {
    const bool existed = exists(dir);
    if (auto ok = ensure_directory(dir); !ok) {
      for (const auto& made : created) ::rmdir(made.c_str());
      return ok;
    }
    if (!existed) created.insert(created.begin(), dir);
  }
  std::vector<TempFile> temps(files.size());
  auto cleanup = [&temps, &created] {
    for (const auto& t : temps) {
      if (!t.committed && !t.path.empty()) ::unlink(t.path.c_str());
    }
    // rmdir only removes an empty directory: one that received a committed file stays.
    for (const auto& made : created) ::rmdir(made.c_str());
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (auto ok = write_temp(files[i], temps[i]); !ok) {
      cleanup();
      return ok;
    }
  }
  if (auto ok = sync_file_systems(temps); !ok) {
    cleanup();
    return ok;
  }
  // With --force, each file being replaced keeps a hard link under a temporary name until every
  // new file is in place, so that a failure half-way puts the old ones back: all or nothing.
  std::vector<std::string> backups(files.size());
  const auto roll_back = [&](std::size_t placed) {
    for (std::size_t j = 0; j < placed; ++j) {
      if (!backups[j].empty()) {
        (void)::rename(backups[j].c_str(), files[j].path.c_str());
        backups[j].clear();
      } else {
        (void)::unlink(files[j].path.c_str());
      }
      temps[j].committed = false;
      temps[j].path.clear();  // already moved: nothing left to remove
    }
    for (const auto& b : backups) {
      if (!b.empty()) (void)::unlink(b.c_str());
    }
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& target = files[i].path;
    int rc = 0;
    if (force) {
      if (exists(target)) {
        auto backup = backup_link(target);
        if (!backup) {
          roll_back(i);
          cleanup();
          return tl::unexpected(backup.error());
        }
        backups[i] = std::move(*backup);
      }
      rc = ::rename(temps[i].path.c_str(), target.c_str());
    } else {
      rc = ::link(temps[i].path.c_str(), target.c_str());
      if (rc == 0) ::unlink(temps[i].path.c_str());
    }
    if (rc != 0) {
      const bool clash = errno == EEXIST;
      const std::string why = errno_text();
      if (!backups[i].empty()) {
        (void)::unlink(backups[i].c_str());
        backups[i].clear();
      }
      roll_back(i);
      cleanup();
      if (clash) {
        return fail(Errc::output_exists, "'" + target + "' appeared while writing; not replaced");
      }
      return fail(Errc::io_error,
                  "cannot create '" + target + "': " + why + "; nothing was replaced");
    }
    temps[i].committed = true;
  }
  for (const auto& b : backups) {
    if (!b.empty()) (void)::unlink(b.c_str());
  }
  return {};
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace getcert::cli
