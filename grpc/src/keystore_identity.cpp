#include "keystore_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <utility>

#include "getcert/keystore.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/text.hpp"
#include "getcert/tls_material.hpp"
#include "internal/try.hpp"

namespace getcert::grpc_tls::detail {
namespace {

std::mutex& hook_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::function<void()>& after_read_hook() {
  static std::function<void()> hook;
  return hook;
}

std::int64_t nanoseconds(const struct timespec& ts) {
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

FileStamp stamp_from(const struct stat& st) {
  FileStamp stamp;
  stamp.device = static_cast<std::uint64_t>(st.st_dev);
  stamp.inode = static_cast<std::uint64_t>(st.st_ino);
  stamp.size = static_cast<std::int64_t>(st.st_size);
  stamp.mtime_ns = nanoseconds(st.st_mtim);
  stamp.ctime_ns = nanoseconds(st.st_ctim);
  return stamp;
}

Error io_failure(const std::string& what, const std::string& path, int err) {
  return {Errc::io_error, what + " '" + path + "': " + std::strerror(err)};
}

class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

bool is_pem_key_text(std::string_view text) {
  return text.find("-----BEGIN") != std::string_view::npos &&
         text.find("PRIVATE KEY-----") != std::string_view::npos;
}

// The first "-----BEGIN ...PRIVATE KEY-----" block of `text` (PKCS#8, encrypted PKCS#8 or a
// traditional RSA/EC key), armour included; empty when there is none.
Secret private_key_block(std::string_view text) {
  std::size_t from = 0;
  while ((from = text.find("-----BEGIN ", from)) != std::string_view::npos) {
    const std::size_t label_end = text.find("-----", from + 11);
    if (label_end == std::string_view::npos) return {};
    const std::string_view label = text.substr(from + 11, label_end - from - 11);
    if (label.size() >= 11 && label.substr(label.size() - 11) == "PRIVATE KEY") {
      const std::string end_line = "-----END " + std::string(label) + "-----";
      const std::size_t end = text.find(end_line, label_end);
      if (end == std::string_view::npos) return {};
      return {text.substr(from, end + end_line.size() - from)};
    }
    from = label_end;
  }
  return {};
}

// A PEM key and its certificates become an Identity through the same code a .p12 goes
// through: pkcs12::create refuses a key that does not match the leaf, and decode() pairs them.
Result<pkcs12::Bundle> bundle_from_pem(std::string_view text,
                                       const std::optional<Secret>& key_passphrase) {
  const Secret key = private_key_block(text);
  if (key.empty()) return fail(Errc::malformed_input, "no complete PEM private key block");
  auto certs = parse_certificates_pem(std::string(text));
  if (!certs) {
    return fail(Errc::malformed_input,
                "no certificate after the private key: " + certs.error().message);
  }
  // Only held in memory for the next call; the iteration count is create()'s minimum.
  constexpr std::string_view kTransient = "getcert transient";
  pkcs12::CreateOptions create;
  create.password = kTransient;
  create.iterations = 2048;
  create.key_passphrase = key_passphrase;
  auto pfx = pkcs12::create(key, *certs, create);
  if (!pfx) {
    // A wrong or missing passphrase of an encrypted key is a password problem, as for a .p12.
    if (pfx.error().code == Errc::wrong_key_password) {
      return fail(Errc::wrong_password, "the PEM private key does not decrypt with the password");
    }
    return tl::unexpected(std::move(pfx.error()));
  }
  pkcs12::DecodeOptions decode;
  decode.password = kTransient;
  return pkcs12::decode(*pfx, decode);
}

Result<pkcs12::Bundle> bundle_of(const std::vector<std::uint8_t>& bytes,
                                 const std::optional<Secret>& password,
                                 const std::optional<Secret>& key_password) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (is_pem_key_text(text)) return bundle_from_pem(text, key_password ? key_password : password);
  if (auto unwrapped = pkcs12::decode_base64_text(bytes)) {
    const std::string_view inner(reinterpret_cast<const char*>(unwrapped->data()),
                                 unwrapped->size());
    if (is_pem_key_text(inner)) {
      return bundle_from_pem(inner, key_password ? key_password : password);
    }
  }
  pkcs12::KeystoreOptions options;
  options.password = password;
  options.key_password = key_password;
  GETCERT_TRY_ASSIGN(auto store, pkcs12::read_keystore(bytes, options));
  return std::move(store.bundle);
}

bool names(const pkcs12::Identity& identity, const std::string& alias) {
  if (identity.alias && *identity.alias == alias) return true;
  return identity.key.attributes().friendly_name == alias ||
         identity.leaf_attributes.friendly_name == alias;
}

}  // namespace

bool FileStamp::operator==(const FileStamp& other) const noexcept {
  return device == other.device && inode == other.inode && size == other.size &&
         mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns;
}

FileStamp stamp_of(const std::string& path) noexcept {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  return stamp_from(st);
}

void set_after_read_hook_for_testing(std::function<void()> hook) {
  const std::lock_guard<std::mutex> lock(hook_mutex());
  after_read_hook() = std::move(hook);
}

Result<SettledRead> read_settled(const std::string& path) {
  // Non-blocking: a FIFO in the store's place cannot stall the open (fstat refuses it next).
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return tl::unexpected(io_failure("cannot open", path, errno));
  struct stat before {};
  if (::fstat(fd.get(), &before) != 0)
    return tl::unexpected(io_failure("cannot stat", path, errno));
  if (!S_ISREG(before.st_mode)) return fail(Errc::io_error, "'" + path + "' is not a regular file");
  if (static_cast<std::uint64_t>(before.st_size) > pkcs12::kMaxInputSize) {
    return fail(Errc::limit_exceeded, "'" + path + "' is larger than a key store can be (" +
                                          std::to_string(pkcs12::kMaxInputSize) + " bytes)");
  }
  SettledRead read;
  read.stamp = stamp_from(before);
  read.bytes.resize(static_cast<std::size_t>(before.st_size) + 1);
  std::size_t filled = 0;
  for (;;) {
    if (filled == read.bytes.size()) {
      // The file grew while it was read: torn by definition.
      read.changed_during_read = true;
      break;
    }
    const ssize_t got = ::read(fd.get(), read.bytes.data() + filled, read.bytes.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return tl::unexpected(io_failure("cannot read", path, errno));
    if (got == 0) break;
    filled += static_cast<std::size_t>(got);
  }
  read.bytes.resize(filled);
  {
    const std::lock_guard<std::mutex> lock(hook_mutex());
    if (after_read_hook()) after_read_hook()();
  }
  struct stat after {};
  const FileStamp now_at_path = stamp_of(path);
  if (::fstat(fd.get(), &after) != 0) return tl::unexpected(io_failure("cannot stat", path, errno));
  // Written to while read (size or times moved), or the name now points at another file (a
  // rename over it, a symlink swap): the bytes are not one version of the key store.
  if (stamp_from(after) != read.stamp || now_at_path != read.stamp ||
      filled != static_cast<std::size_t>(before.st_size)) {
    read.changed_during_read = true;
  }
  return read;
}

Result<std::optional<Secret>> read_password(const PasswordSource& source) {
  if (source.value && !source.value->empty()) return std::optional<Secret>(*source.value);
  if (!source.file.empty()) {
    auto read = read_settled(source.file);
    if (!read) {
      return fail(Errc::io_error, "password file: " + read.error().message);
    }
    SecureString text(read->bytes.begin(), read->bytes.end());
    secure_wipe(read->bytes.data(), read->bytes.size());
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    // Where the password reaches OpenSSL as a C string, a NUL would cut it: refused, not cut.
    if (std::find(text.begin(), text.end(), '\0') != text.end()) {
      return fail(Errc::invalid_argument,
                  "password file: '" + source.file + "' holds a NUL byte; a password cannot");
    }
    return std::optional<Secret>(Secret(std::move(text)));
  }
  if (!source.env.empty()) {
    const char* value = std::getenv(source.env.c_str());
    if (value == nullptr) {
      return fail(Errc::invalid_argument,
                  "password variable " + source.env + " is not set in the environment");
    }
    return std::optional<Secret>(Secret(value));
  }
  if (source.value) return std::optional<Secret>(*source.value);
  return std::optional<Secret>();
}

Result<LoadedIdentity> load_identity(const std::vector<std::uint8_t>& bytes,
                                     const std::optional<Secret>& password,
                                     const std::optional<Secret>& key_password,
                                     const std::string& alias) {
  if (bytes.empty()) return fail(Errc::malformed_input, "the file is empty");
  GETCERT_TRY_ASSIGN(auto bundle, bundle_of(bytes, password, key_password));

  const pkcs12::Identity* chosen = nullptr;
  std::size_t with_leaf = 0;
  for (const auto& identity : bundle.identities) {
    if (!identity.leaf) continue;
    ++with_leaf;
    if (alias.empty() ? chosen == nullptr : names(identity, alias)) chosen = &identity;
  }
  if (!alias.empty() && chosen == nullptr) {
    return fail(Errc::invalid_argument,
                "no private key with its certificate is named " + quote_name(alias));
  }
  if (with_leaf == 0) {
    return fail(Errc::invalid_argument,
                bundle.identities.empty()
                    ? "no private key in the key store"
                    : "no certificate matches the private key (key and certificate differ)");
  }
  if (alias.empty() && with_leaf > 1) {
    return fail(Errc::invalid_argument,
                std::to_string(with_leaf) + " private keys with certificates: name one (alias)");
  }
  GETCERT_TRY_ASSIGN(auto material, identity_material(*chosen));
  LoadedIdentity loaded;
  loaded.pem = std::move(material.key_pem);
  if (!loaded.pem.empty() && loaded.pem.back() != '\n') loaded.pem += '\n';
  loaded.pem.append(material.cert_chain_pem.begin(), material.cert_chain_pem.end());
  loaded.leaf = *chosen->leaf;
  return loaded;
}

}  // namespace getcert::grpc_tls::detail
