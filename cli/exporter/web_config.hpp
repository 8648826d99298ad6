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

#include <map>
#include <string>

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
// with the right password. The hash is compared in constant time.
bool check_basic_auth(const WebConfig& web, const std::string& authorization);

}  // namespace getcert::cli::exporter
