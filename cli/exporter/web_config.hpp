#pragma once

// The web config file of Prometheus' exporter-toolkit (--web.config.file): TLS for the
// listener and basic auth users with bcrypt hashes, so that one file serves getcert and the
// other exporters of a host alike.
//
//   tls_server_config:
//     cert_file: /etc/getcert/server.pem
//     key_file: /etc/getcert/server.key
//     client_ca_file: /etc/getcert/clients.pem   # optional: then clients must present one
//   basic_auth_users:
//     prometheus: $2y$10$...                      # htpasswd -nBC 10 "" | tr -d ':\n'

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "getcert/error.hpp"

namespace getcert::cli::exporter {

struct WebConfig {
  bool tls = false;
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  std::map<std::string, std::string> users;  // name -> crypt(3) hash (bcrypt: $2y$, $2b$)
};

// Errors name the file, line and key, as load_config's do.
Result<WebConfig> load_web_config(const std::string& path);

// Whether an Authorization header ("Basic base64(user:password)") names a configured user
// with the right password (the hash compared in constant time), as exporter-toolkit does it:
// - a successful check is remembered for `ttl` (by a SHA-256 of user, hash and password, never
//   the password itself), so that Prometheus' scrapes cost one bcrypt a minute, not one each;
// - an unknown user costs a bcrypt all the same, against a dummy hash of the highest cost
//   configured, so that the time taken does not tell which user names exist.
// Thread-safe.
class BasicAuth {
 public:
  explicit BasicAuth(const WebConfig& web, std::chrono::seconds ttl = std::chrono::seconds(60));
  bool enabled() const { return !users_.empty(); }
  // True when no user is configured.
  bool check(const std::string& authorization);
  // Successful checks remembered now (tests).
  std::size_t cached() const;

 private:
  std::map<std::string, std::string> users_;
  std::string dummy_hash_;
  std::chrono::seconds ttl_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> ok_until_;
};

}  // namespace getcert::cli::exporter
