#pragma once

// Output files that are never half-written and never silently clobbered.

#include <sys/types.h>

#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/secret.hpp"

namespace getcert::cli {

struct PendingFile {
  std::string path;
  // Wiped when the PendingFile goes away: it may be a private key, which goes from the decoder
  // (a SecureString) to the file without ever sitting in a plain std::string.
  Secret content;
  mode_t mode = 0644;  // private keys: 0600
};

// Writes every file or none: existing targets are refused up front unless `force` (and with
// `force`, one that is a directory, which cannot be replaced); then the missing `directories`
// (one level each, in order, 0755) are created; each file is written to a temporary sibling
// (created with its final mode); the temporaries' file systems are synced (syncfs), then each
// is moved into place. Without `force` the move uses link(2), so a file that appears meanwhile
// is not lost; with `force` each replaced file is kept under a second name until all are in
// place. A failure puts the old files back, removes the new ones, the temporaries and the
// directories this call created (when still empty).
// directories[0] is the folder the user named (--out-dir), which may be a symbolic link; every
// later entry is a subfolder getcert named inside it, refused when it is a symbolic link.
Result<void> write_files_atomically(const std::vector<PendingFile>& files, bool force,
                                    const std::vector<std::string>& directories = {});

// `dir` + "/" + `name`, without doubling a slash the user wrote: `--out-dir tls/` gives
// "tls/key.pem", not "tls//key.pem", in every path getcert prints.
std::string join_path(const std::string& dir, const std::string& name);

// Creates `dir` (one level, 0755) when it does not exist.
Result<void> ensure_directory(const std::string& dir);

}  // namespace getcert::cli
