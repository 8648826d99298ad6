#include "exporter/probe.hpp"

#include <dirent.h>
#include <fnmatch.h>
#include <glob.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string_view>

#include "getcert/keystore.hpp"
#include "getcert/pkcs12.hpp"
#include "internal/owners.hpp"
#include "internal/read_file.hpp"
#include "p12_input.hpp"
#include "password.hpp"

namespace getcert::cli::exporter {
namespace {

using Clock = std::chrono::steady_clock;

// Prometheus's scrape timeout header is cut by this much, as blackbox_exporter's
// --timeout-offset does by default, so the answer (and its transfer) fits in the scrape.
constexpr std::chrono::milliseconds kScrapeMargin{500};
// Below this a probe cannot even finish a handshake on loopback; a shorter bound would turn
// every answer into a timeout that says nothing about the target.
constexpr std::chrono::milliseconds kMinProbeTimeout{100};
// A file:// glob may match a whole directory tree by mistake; the answer must stay small.
constexpr std::size_t kMaxFiles = 256;
// A certificate file or key store is a few KiB; a Java trust store a few hundred.
constexpr std::size_t kMaxFileBytes = std::size_t{16} * 1024 * 1024;
constexpr std::string_view kFileScheme = "file://";

std::vector<std::uint8_t> address_bytes(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    const auto* b = reinterpret_cast<const std::uint8_t*>(&in->sin_addr);
    return {b, b + 4};
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    const auto* b = reinterpret_cast<const std::uint8_t*>(&in6->sin6_addr);
    return {b, b + 16};
  }
  return {};
}

bool in_any_cidr(const AllowList& allow, const std::vector<std::uint8_t>& addr) {
  return std::any_of(allow.cidrs.begin(), allow.cidrs.end(),
                     [&](const Cidr& c) { return cidr_contains(c, addr); });
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& text, int flags) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return fnmatch(p.c_str(), text.c_str(), flags) == 0;
  });
}

// Every address `host` resolves to lies in the allowed ranges. A name that resolves to one
// allowed and one forbidden address is refused: the dialer may try either.
bool resolves_inside(const AllowList& allow, const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* raw = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &raw) != 0) return false;
  const internal::AddrinfoPtr found(raw);
  bool all = found != nullptr;
  for (const addrinfo* a = found.get(); a != nullptr; a = a->ai_next) {
    all = all && in_any_cidr(allow, address_bytes(a->ai_addr));
  }
  return all;
}

// Addresses that are not on the public internet: unspecified, loopback, private (RFC 1918,
// unique local), shared (RFC 6598), link-local, multicast and reserved ranges. An IPv4-mapped
// or IPv4-compatible IPv6 address is judged as the IPv4 address inside it.
bool is_internal_address(std::vector<std::uint8_t> a) {
  if (a.size() == 16) {
    const bool mapped = std::all_of(a.begin(), a.begin() + 10, [](auto b) { return b == 0; }) &&
                        ((a[10] == 0xff && a[11] == 0xff) || (a[10] == 0 && a[11] == 0));
    if (mapped && !(a[10] == 0 && a[12] == 0 && a[13] == 0 && a[14] == 0)) {
      a = std::vector<std::uint8_t>(a.begin() + 12, a.end());
    } else {
      const bool zero_prefix =
          std::all_of(a.begin(), a.begin() + 15, [](auto b) { return b == 0; });
      if (zero_prefix && (a[15] == 0 || a[15] == 1)) return true;  // :: and ::1
      if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return true;      // fe80::/10 link-local
      if ((a[0] & 0xfe) == 0xfc) return true;                      // fc00::/7 unique local
      if (a[0] == 0xff) return true;                               // ff00::/8 multicast
      if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) return true;      // fec0::/10 site-local
      return false;
    }
  }
  if (a.size() != 4) return true;  // not an address: never dialled as a public one
  return a[0] == 0 || a[0] == 10 || a[0] == 127 || (a[0] == 100 && (a[1] & 0xc0) == 64) ||
         (a[0] == 169 && a[1] == 254) || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
         (a[0] == 192 && a[1] == 168) || (a[0] == 192 && a[1] == 0 && a[2] == 0) || a[0] >= 224;
}

// What an AIA, OCSP or CRL download may reach. Its URL comes from the certificate being
// judged, so a target's owner could otherwise make the exporter request any internal URL: the
// allow list's ports and hosts (or ranges) apply as for targets, and internal addresses are
// refused unless the allow list's ranges name them or the module allows them.
DownloadPolicy download_policy(const Module& module, const AllowList* allow) {
  return [allow = allow != nullptr ? *allow : AllowList{},
          private_ok = module.fetch_private_addresses](
             const DownloadTarget& t) -> std::optional<std::string> {
    std::string host = t.host;
    for (auto& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // Through a proxy the name is not resolved here: an IP literal still counts as itself.
    std::vector<std::vector<std::uint8_t>> addresses;
    for (const auto& text : t.addresses) {
      if (auto cidr = parse_cidr(text)) addresses.push_back(cidr->address);
    }
    if (t.addresses.empty()) {
      if (auto cidr = parse_cidr(host); cidr && host.find('/') == std::string::npos) {
        addresses.push_back(cidr->address);
      }
    }
    if (allow.present) {
      const bool port_ok =
          allow.ports.empty() ||
          std::any_of(allow.ports.begin(), allow.ports.end(), [&](const auto& range) {
            return t.port >= range.first && t.port <= range.second;
          });
      if (!port_ok) return "port " + std::to_string(t.port) + " is not in the allow list";
      const bool host_ok = matches_any(allow.host_patterns, host, 0) ||
                           (!allow.cidrs.empty() && !addresses.empty() &&
                            std::all_of(addresses.begin(), addresses.end(),
                                        [&](const auto& a) { return in_any_cidr(allow, a); }));
      if (!host_ok) return "host '" + host + "' is not in the allow list";
    }
    if (!private_ok) {
      for (std::size_t i = 0; i < addresses.size(); ++i) {
        if (is_internal_address(addresses[i]) && !in_any_cidr(allow, addresses[i])) {
          const std::string shown = i < t.addresses.size() ? t.addresses[i] : host;
          return "address " + shown +
                 " is internal (loopback, private or link-local); the module's "
                 "fetch_private_addresses: true, or the allow list's cidrs, allow it";
        }
      }
    }
    return std::nullopt;
  };
}

std::string reason_of(const Verification& v) {
  if (!v.errors.empty()) return std::string(to_string(v.errors.front().code));
  return std::string(to_string(v.verdict));
}

// Regular files only, checked after the open: a file swapped for a FIFO after the glob's stat
// cannot hang a scrape.
std::optional<std::vector<std::uint8_t>> read_small_file(const std::string& path) {
  auto bytes = internal::read_bounded_file(path, kMaxFileBytes, "'" + path + "'",
                                           internal::FileKinds::regular);
  if (!bytes) return std::nullopt;
  return std::vector<std::uint8_t>(bytes->begin(), bytes->end());
}

// The certificates of one file: PEM, DER or PKCS#7 directly; PKCS#12, JKS and JCEKS through
// the key store reader (each identity's leaf and chain, then the other certificates).
Result<std::vector<Certificate>> certificates_in(const std::vector<std::uint8_t>& bytes,
                                                 const std::string& path, const Module& module) {
  if (looks_like_keystore(bytes)) {
    PasswordArgs args;
    args.file = module.file_password_file.value_or("");
    args.env = module.file_password_env.value_or("");
    std::istringstream no_input;
    std::ostringstream sink;
    Terminal none{no_input, sink, sink};
    auto password = read_password(args, none);
    if (!password) return tl::unexpected(password.error());
    pkcs12::KeystoreOptions options;
    if (*password) options.password = Secret(**password);
    // A trust store (Java's cacerts) is listed without its password, as keytool -list does.
    options.list_without_password = true;
    auto store = pkcs12::read_keystore(bytes, options);
    if (!store) return fail(store.error().code, path + ": " + store.error().message);
    std::vector<Certificate> out;
    for (const auto& id : store->bundle.identities) {
      if (id.leaf) out.push_back(*id.leaf);
      out.insert(out.end(), id.chain.begin(), id.chain.end());
    }
    out.insert(out.end(), store->bundle.extra_certs.begin(), store->bundle.extra_certs.end());
    return out;
  }
  auto certs = parse_certificates(bytes);
  if (!certs) return fail(certs.error().code, path + ": " + certs.error().message);
  return certs;
}

// A file the glob found is read only when the path it found is one the allow list allows. The
// pattern was checked as text, which says nothing about what glob's escapes expand to: `k8s/\.\./x`
// passes a check for "..", and glob turns it into `k8s/../x`. So each path glob returns must
// have no "." or ".." component and match an allowed pattern itself. Symbolic links are followed
// as they are (a Kubernetes secret volume is links to a timestamped folder): a link is put in an
// allowed folder by whoever may write there.
bool really_allowed(const std::string& path, const AllowList* allow) {
  if (allow == nullptr) return true;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part(path.data() + start, end - start);
    if (part == "." || part == "..") return false;
    start = end + 1;
  }
  return matches_any(allow->file_patterns, path, FNM_PATHNAME);
}

// glob() reads as many directories as the pattern's wildcards reach, before any cap on what
// it returns applies: `/*/*/*/*` walks a whole file system. Its directory reads go through
// these (glibc's GLOB_ALTDIRFUNC), which count every entry read and end each directory early
// once kMaxGlobEntries have been read in all; the probe then reports too_many_files.
constexpr std::size_t kMaxGlobEntries = 10000;
thread_local std::size_t glob_entries_read = 0;

void* glob_opendir(const char* path) {
  return glob_entries_read > kMaxGlobEntries ? nullptr : static_cast<void*>(opendir(path));
}
dirent* glob_readdir(void* dir) {
  if (++glob_entries_read > kMaxGlobEntries) return nullptr;
  return readdir(static_cast<DIR*>(dir));
}
void glob_closedir(void* dir) { closedir(static_cast<DIR*>(dir)); }
int glob_lstat(const char* path, struct stat* st) { return lstat(path, st); }
int glob_stat(const char* path, struct stat* st) { return stat(path, st); }

// glob(3) with every directory read counted; `exhausted` says the bound cut it short.
int bounded_glob(const std::string& pattern, glob_t& g, bool& exhausted) {
  g.gl_opendir = glob_opendir;
  g.gl_readdir = glob_readdir;
  g.gl_closedir = glob_closedir;
  g.gl_lstat = glob_lstat;
  g.gl_stat = glob_stat;
  glob_entries_read = 0;
  const int rc = glob(pattern.c_str(), GLOB_NOSORT | GLOB_ALTDIRFUNC, nullptr, &g);
  exhausted = glob_entries_read > kMaxGlobEntries;
  return rc;
}

ProbeOutcome probe_files(const std::string& pattern, const Module& module, const AllowList* allow) {
  ProbeOutcome out;
  glob_t g{};
  bool exhausted = false;
  const int rc = bounded_glob(pattern, g, exhausted);
  if (exhausted) {
    globfree(&g);
    out.reason = "too_many_files";
    return out;
  }
  std::vector<std::string> paths;
  bool refused = false;
  if (rc == 0) {
    for (std::size_t i = 0; i < g.gl_pathc && paths.size() <= kMaxFiles; ++i) {
      if (!really_allowed(g.gl_pathv[i], allow)) {
        refused = true;
        continue;
      }
      paths.emplace_back(g.gl_pathv[i]);
    }
  }
  globfree(&g);
  if (refused && paths.empty()) {
    out.reason = "file_not_allowed";
    return out;
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) {
    out.reason = "no_file";
    return out;
  }
  if (paths.size() > kMaxFiles) {
    out.reason = "too_many_files";
    return out;
  }
  const std::int64_t now = std::time(nullptr);
  bool all_read = true;
  bool any_expired = false;
  std::int64_t earliest = INT64_MAX;
  for (const auto& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto bytes = read_small_file(path);
    if (!bytes) {
      all_read = false;
      continue;
    }
    auto certs = certificates_in(*bytes, path, module);
    if (!certs) {
      all_read = false;
      continue;
    }
    FileChain f;
    f.path = path;
    f.certificates = std::move(*certs);
    if (!f.certificates.empty()) {
      VerifyOptions options = module.fetch.verify;
      options.name.clear();
      options.fetch_missing = false;  // a file probe stays offline
      options.check_revocation = false;
      auto v = verify_chain(f.certificates, options);
      if (v) f.verification = std::move(*v);
    }
    for (const auto& c : f.certificates) {
      any_expired = any_expired || c.not_after < now || c.not_before > now;
      earliest = std::min(earliest, c.not_after);
    }
    out.files.push_back(std::move(f));
  }
  if (!all_read) {
    out.reason = "unreadable_file";
  } else if (out.files.empty()) {
    out.reason = "no_certificate";
  } else if (any_expired) {
    out.reason = "expired";
  } else if (module.expiry_window_seconds && earliest < now + *module.expiry_window_seconds) {
    out.reason = "expires_soon";
  } else {
    out.success = true;
  }
  return out;
}

}  // namespace

std::chrono::milliseconds probe_timeout(const Module& module,
                                        std::optional<double> scrape_timeout_seconds) {
  auto bound = module.fetch.connect.timeout;
  if (scrape_timeout_seconds && *scrape_timeout_seconds > 0 && *scrape_timeout_seconds < 1e6) {
    const auto scrape =
        std::chrono::milliseconds(static_cast<std::int64_t>(*scrape_timeout_seconds * 1000.0)) -
        kScrapeMargin;
    bound = std::min(bound, scrape);
  }
  return std::max(bound, kMinProbeTimeout);
}

std::optional<ProbeRefusal> check_allowed(const std::string& target, const Module& module,
                                          const AllowList& allow) {
  if (target.empty()) return ProbeRefusal{400, "target parameter is missing"};
  if (target.rfind(kFileScheme, 0) == 0) {
    const std::string path = target.substr(kFileScheme.size());
    if (path.empty() || path[0] != '/') {
      return ProbeRefusal{400, "a file target is file:///absolute/path"};
    }
    const bool ends_up = path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0;
    if (path.find("/../") != std::string::npos || ends_up) {
      return ProbeRefusal{400, "a file target may not contain '..'"};
    }
    // Reading files is opt-in: without a `files` pattern, anyone who reaches the port could
    // read every certificate and key store the service user can, and probe which files exist.
    if (allow.file_patterns.empty()) {
      return ProbeRefusal{403,
                          "file targets are off: list the folders they may read under "
                          "allow: files: in the config"};
    }
    if (!matches_any(allow.file_patterns, path, FNM_PATHNAME)) {
      return ProbeRefusal{403, "file target not in the allow list"};
    }
    return std::nullopt;
  }
  auto endpoint = parse_endpoint(target, module.default_port);
  if (!endpoint) return ProbeRefusal{400, endpoint.error().message};
  if (!allow.present) return std::nullopt;
  const bool port_ok = allow.ports.empty() ||
                       std::any_of(allow.ports.begin(), allow.ports.end(), [&](const auto& range) {
                         return endpoint->port >= range.first && endpoint->port <= range.second;
                       });
  if (!port_ok) return ProbeRefusal{403, "port " + std::to_string(endpoint->port) + " not allowed"};
  if (matches_any(allow.host_patterns, endpoint->host, 0)) return std::nullopt;
  if (!allow.cidrs.empty()) {
    if (endpoint->is_ip) {
      auto cidr = parse_cidr(endpoint->host);
      if (cidr && in_any_cidr(allow, cidr->address)) return std::nullopt;
    } else if (module.fetch.connect.proxy.empty() && resolves_inside(allow, endpoint->host)) {
      return std::nullopt;
    }
  }
  return ProbeRefusal{403, "target not in the allow list"};
}

ProbeOutcome run_probe(const std::string& target, const Module& module,
                       std::chrono::milliseconds timeout, const AllowList* allow) {
  const auto started = Clock::now();
  ProbeOutcome out;
  if (target.rfind(kFileScheme, 0) == 0) {
    out = probe_files(target.substr(kFileScheme.size()), module, allow);
  } else {
    FetchOptions options = module.fetch;
    options.connect.timeout = timeout;
    options.connect.connect_timeout = std::min(options.connect.connect_timeout, timeout);
    if (!module.verify_name) options.verify.name.clear();
    options.verify.download_policy = download_policy(module, allow);
    std::vector<StepTiming> steps;
    options.on_step = [&steps](const StepTiming& t) { steps.push_back(t); };
    auto endpoint = parse_endpoint(target, module.default_port);
    if (!endpoint) {
      out.reason = std::string(to_string(endpoint.error().code));
    } else {
      auto result = fetch(*endpoint, options);
      out.timings = std::move(steps);
      if (!result) {
        out.reason = std::string(to_string(result.error().code));
      } else {
        const Verification& v = result->verification;
        if (!v.ok) {
          out.reason = reason_of(v);
        } else {
          const auto& chain = v.verified_chain.empty() ? result->presented_chain : v.verified_chain;
          std::int64_t earliest = INT64_MAX;
          for (const auto& c : chain) earliest = std::min(earliest, c.not_after);
          if (module.expiry_window_seconds &&
              earliest < std::time(nullptr) + *module.expiry_window_seconds) {
            out.reason = "expires_soon";
          } else {
            out.success = true;
          }
        }
        out.fetched = std::move(*result);
      }
    }
  }
  out.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  return out;
}

}  // namespace getcert::cli::exporter
