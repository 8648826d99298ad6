#pragma once

// The configuration of `getcert serve`: a YAML file of probe modules (as blackbox_exporter's)
// and an allow list of targets. Parsing is strict: an unknown key, a wrong type or a bad value
// is an error naming the file, the line and the key, so a typo never silently probes with
// defaults.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/fetch.hpp"

namespace getcert::cli::exporter {

// Where a client identity comes from. Passwords are named, never written in the config:
// password_file (first line) or password_env (an environment variable's value).
struct ClientIdentitySource {
  std::string cert_file;      // PEM certificate (+ chain), with key_file
  std::string key_file;       // unencrypted PEM key
  std::string keystore_file;  // PKCS#12 or JKS/JCEKS holding a key and its certificate
  std::string password_file;
  std::string password_env;
};

struct Module {
  std::string name;
  FetchOptions fetch;  // connect + verify options; timeout is the module's own bound
  std::uint16_t default_port = 443;
  bool verify_name = true;  // check the target's name (or `server_name`) against the leaf
  // AIA, OCSP and CRL downloads (URLs written by the certificate being judged) may go to
  // loopback, link-local and private addresses; off, only to addresses the allow list's
  // `cidrs` name. Targets are not concerned: the allow list decides those.
  bool fetch_private_addresses = false;
  std::optional<ClientIdentitySource> client;
  // Read from `client` when the config is loaded, so a bad key store fails at start, and a
  // probe never reads a secret from disk.
  std::optional<ClientIdentity> identity;
  // Targets whose earliest notAfter is closer than this fail the probe (reason
  // "expires_soon"); nullopt: expiry does not decide success (alert on the metric instead).
  std::optional<std::int64_t> expiry_window_seconds;
  // file:// targets: the password of key stores (PKCS#12, JKS) found there.
  std::optional<std::string> file_password_file;
  std::optional<std::string> file_password_env;
};

// A network range: an address (4 or 16 bytes) and a prefix length.
struct Cidr {
  std::vector<std::uint8_t> address;
  int prefix = 0;
};

// What targets a probe may name. Empty (no `allow:` section): anything, which lets whoever
// reaches the exporter make it dial anywhere (see docs-pending/exporter.md).
struct AllowList {
  bool present = false;
  std::vector<std::string> host_patterns;  // "*.example.com", "localhost": fnmatch, lowercase
  std::vector<Cidr> cidrs;                 // IP literals, and every address a name resolves to
  std::vector<std::pair<std::uint16_t, std::uint16_t>> ports;  // inclusive ranges; empty: any
  std::vector<std::string> file_patterns;  // file:// targets: paths (fnmatch); empty: none
};

struct Config {
  std::string path;  // the file it was read from
  std::map<std::string, Module> modules;
  AllowList allow;
};

// Reads and checks `path`. Errors: io_error (cannot read), invalid_argument with a message
// "PATH:LINE: KEY: what is wrong" for anything else.
Result<Config> load_config(const std::string& path);

// The config used without --config: one module, "default" (TLS on port 443, the system trust
// store, a 10 s timeout), and no allow list.
Config default_config();

// Whether `addr` (4 or 16 bytes) is inside `cidr`.
bool cidr_contains(const Cidr& cidr, const std::vector<std::uint8_t>& addr);

// Parses "192.0.2.0/24", "2001:db8::/32" or a bare address (a /32 or /128).
std::optional<Cidr> parse_cidr(const std::string& text);

}  // namespace getcert::cli::exporter
