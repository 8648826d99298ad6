#pragma once

// Where the system trust store is, found the way Go's crypto/x509 finds it: a search list of the
// CA bundle files and certificate directories of the common Linux distributions, overridden by
// SSL_CERT_FILE and SSL_CERT_DIR. OpenSSL's own compiled-in locations (its OPENSSLDIR) are only
// the last candidates: a static getcert carries the OPENSSLDIR of the system it was built on,
// which means nothing on another distribution.

#include <string>
#include <string_view>
#include <vector>

namespace getcert::detail {

// The well-known bundle files, in search order (Debian/Ubuntu/Arch/Gentoo, Fedora/RHEL,
// openSUSE, OpenELEC, CentOS/RHEL 7+, Arch's extracted bundle, Alpine/macOS-style cert.pem).
const std::vector<std::string_view>& system_bundle_files();
// The well-known certificate directories, in search order.
const std::vector<std::string_view>& system_certificate_dirs();

struct SystemTrustSources {
  std::vector<std::string> dirs;  // directories with OpenSSL hash links, looked up lazily
  std::string file;               // a PEM bundle, indexed lazily; empty for none
};

// Chooses the system store's sources. `env_file` / `env_dir` are SSL_CERT_FILE / SSL_CERT_DIR
// (nullptr or empty when unset; SSL_CERT_DIR is a colon-separated list, as for Go and OpenSSL).
// `root` is prefixed to every well-known path (not to the environment's), so tests can lay out
// a distribution's files under a temporary directory; it is empty in real use.
//   - Directories: SSL_CERT_DIR's entries, else the well-known directories and OpenSSL's default;
//     each distinct one holding hash links ("5db8f40a.0") is used.
//   - The bundle: SSL_CERT_FILE when set (used next to the directories, as before); else, only
//     when no directory was usable, the first well-known bundle file (then OpenSSL's default
//     file) that exists - first found wins.
SystemTrustSources find_system_trust(const std::string& root, const char* env_file,
                                     const char* env_dir);

// Every path find_system_trust() may consider, for a cache key that notices when one changes.
std::vector<std::string> system_trust_candidates(const std::string& root, const char* env_file,
                                                 const char* env_dir);

}  // namespace getcert::detail
