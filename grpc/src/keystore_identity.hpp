#pragma once

// Private to getcert::grpc: one version of a key store file turned into what gRPC is given
// (key + chain as one PEM text), with the key and the certificate checked as a pair first.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "getcert/grpc_reloading.hpp"
#include "getcert/secret.hpp"

namespace getcert::grpc_tls::detail {

// What identifies one version of a file without reading it (stat, following symlinks).
struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = -1;  // -1: the file is missing or cannot be stat'ed
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp& other) const noexcept;
  bool operator!=(const FileStamp& other) const noexcept { return !(*this == other); }
};
FileStamp stamp_of(const std::string& path) noexcept;

struct SettledRead {
  std::vector<std::uint8_t> bytes;
  FileStamp stamp;                   // of the file that was read
  bool changed_during_read = false;  // the bytes may be torn: read again, judge nothing
};

// Reads `path` whole (at most pkcs12::kMaxInputSize bytes) and tells whether the file was
// written to or replaced (rename, symlink swap) while it was read. Errors: io_error,
// limit_exceeded.
Result<SettledRead> read_settled(const std::string& path);

// Tests only: called between the read and the checks after it, to replace the file mid-read.
void set_after_read_hook_for_testing(std::function<void()> hook);

// The password a source names right now (nullopt: none given). Errors: io_error (the file
// cannot be read), invalid_argument (the environment variable is not set).
Result<std::optional<Secret>> read_password(const PasswordSource& source);

struct LoadedIdentity {
  SecureString pem;  // "-----BEGIN PRIVATE KEY-----" block, then the chain (leaf first)
  Certificate leaf;
};

// Decodes one version of a key store: PKCS#12/JKS/JCEKS (via pkcs12::read_keystore), PEM key
// + certificates, or either as base64 text. The result always holds a key and the certificate
// of that key. Errors: malformed_input, wrong_password, unsupported, limit_exceeded,
// invalid_argument (no key with its certificate; several and no alias; alias not found).
Result<LoadedIdentity> load_identity(const std::vector<std::uint8_t>& bytes,
                                     const std::optional<Secret>& password,
                                     const std::optional<Secret>& key_password,
                                     const std::string& alias);

}  // namespace getcert::grpc_tls::detail
