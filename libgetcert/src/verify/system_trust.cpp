#include "verify/system_trust.hpp"

#include <dirent.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>

namespace getcert::detail {
namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// True when dir holds OpenSSL hash links ("5db8f40a.0"), so lookups can be lazy.
bool has_hash_links(const std::string& dir) {
  const std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return false;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view name = e->d_name;
    if (name.size() >= 10 && name[8] == '.' &&
        name.substr(0, 8).find_first_not_of("0123456789abcdef") == std::string_view::npos &&
        name.substr(9).find_first_not_of("0123456789") == std::string_view::npos) {
      return true;
    }
  }
  return false;
}

std::string canonical(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

std::vector<std::string> split_colons(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    if (end > start) out.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool set(const char* v) { return v != nullptr && *v != '\0'; }

std::vector<std::string> candidate_dirs(const std::string& root, const char* env_dir) {
  if (set(env_dir)) return split_colons(env_dir);
  std::vector<std::string> out;
  for (const std::string_view d : system_certificate_dirs()) out.push_back(root + std::string(d));
  out.push_back(root + X509_get_default_cert_dir());
  return out;
}

std::vector<std::string> candidate_files(const std::string& root, const char* env_file) {
  if (set(env_file)) return {env_file};
  std::vector<std::string> out;
  for (const std::string_view f : system_bundle_files()) out.push_back(root + std::string(f));
  out.push_back(root + X509_get_default_cert_file());
  return out;
}

}  // namespace

const std::vector<std::string_view>& system_bundle_files() {
  static const std::vector<std::string_view> files{
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Arch, Gentoo
      "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL 6
      "/etc/ssl/ca-bundle.pem",                             // openSUSE
      "/etc/pki/tls/cacert.pem",                            // OpenELEC
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // CentOS, RHEL 7+
      "/etc/ca-certificates/extracted/tls-ca-bundle.pem",   // Arch (what its cert.pem links to)
      "/etc/ssl/cert.pem",                                  // Alpine
  };
  return files;
}

const std::vector<std::string_view>& system_certificate_dirs() {
  static const std::vector<std::string_view> dirs{
      "/etc/ssl/certs",                // Debian, Ubuntu, SLES, Alpine, Arch
      "/etc/pki/tls/certs",            // Fedora, RHEL
      "/system/etc/security/cacerts",  // Android
  };
  return dirs;
}

SystemTrustSources find_system_trust(const std::string& root, const char* env_file,
                                     const char* env_dir) {
  SystemTrustSources out;
  std::vector<std::string> seen;
  for (const std::string& dir : candidate_dirs(root, env_dir)) {
    std::string real = canonical(dir);
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
    seen.push_back(std::move(real));
    if (has_hash_links(dir)) out.dirs.push_back(dir);
  }
  if (!set(env_file) && !out.dirs.empty()) return out;
  for (const std::string& file : candidate_files(root, env_file)) {
    if (is_regular_file(file)) {
      out.file = file;
      break;
    }
  }
  return out;
}

std::vector<std::string> system_trust_candidates(const std::string& root, const char* env_file,
                                                 const char* env_dir) {
  std::vector<std::string> out = candidate_dirs(root, env_dir);
  for (std::string& f : candidate_files(root, env_file)) out.push_back(std::move(f));
  return out;
}

}  // namespace getcert::detail
