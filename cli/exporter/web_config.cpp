#include "exporter/web_config.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <memory>
#include <optional>
#include <set>

#include "exporter/yaml_file.hpp"
#include "internal/try.hpp"

namespace getcert::cli::exporter {
namespace {

tl::unexpected<Error> error_at(const std::string& path, const YAML::Node& node,
                               const std::string& key, const std::string& what) {
  return fail(Errc::invalid_argument,
              path + ":" + std::to_string(node.Mark().line + 1) + ": " + key + ": " + what);
}

std::string decode_base64(const std::string& text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4096) return {};
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return {};
  // At most two '=' of padding, at the very end ("====" or "a===" is not base64): more would
  // take away bytes that were never there.
  std::size_t pad = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '='; ++it) ++pad;
  if (pad > 2 || static_cast<std::size_t>(n) < pad) return {};
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

// Each cost step doubles the time of one check, which every authenticated request pays (cost
// 31 would take days per request): above 14, 2^9 times htpasswd -B's default of 5, a scrape
// would wait on the check, and a client could queue such checks.
constexpr int kMaxBcryptCost = 14;

// The cost of a "$2a$NN$...", "$2b$NN$..." or "$2y$NN$..." hash; nullopt when it has none.
std::optional<int> bcrypt_cost(const std::string& hash) {
  if (hash.size() < 7 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$') {
    return std::nullopt;
  }
  if (std::isdigit(static_cast<unsigned char>(hash[4])) == 0 ||
      std::isdigit(static_cast<unsigned char>(hash[5])) == 0) {
    return std::nullopt;
  }
  return (hash[4] - '0') * 10 + (hash[5] - '0');
}

}  // namespace

Result<WebConfig> load_web_config(const std::string& path) {
  GETCERT_TRY_ASSIGN(const YAML::Node root, load_yaml_file(path, "web config file"));
  WebConfig web;
  if (root.IsNull()) return web;
  if (!root.IsMap()) return error_at(path, root, "(top level)", "must be a mapping");
  try {
    for (const auto& entry : root) {
      const std::string key = entry.first.Scalar();
      const YAML::Node& v = entry.second;
      if (key == "tls_server_config") {
        if (!v.IsMap()) return error_at(path, v, key, "must be a mapping");
        for (const auto& t : v) {
          const std::string k = t.first.Scalar();
          const std::string full = key + "." + k;
          if (!t.second.IsScalar()) return error_at(path, t.second, full, "must be a value");
          if (k == "cert_file") {
            web.cert_file = t.second.Scalar();
          } else if (k == "key_file") {
            web.key_file = t.second.Scalar();
          } else if (k == "client_ca_file") {
            web.client_ca_file = t.second.Scalar();
          } else {
            return error_at(path, t.first, full,
                            "not supported by getcert (cert_file, key_file, client_ca_file)");
          }
        }
        if (web.cert_file.empty() || web.key_file.empty()) {
          return error_at(path, v, key, "needs cert_file and key_file");
        }
        web.tls = true;
      } else if (key == "basic_auth_users") {
        if (!v.IsMap()) return error_at(path, v, key, "must map user names to bcrypt hashes");
        for (const auto& u : v) {
          const std::string user = u.first.Scalar();
          if (!u.second.IsScalar())
            return error_at(path, u.second, key + "." + user, "must be a hash");
          const std::string hash = u.second.Scalar();
          if (hash.rfind("$2", 0) != 0) {
            return error_at(path, u.second, key + "." + user,
                            "must be a bcrypt hash ($2y$..., e.g. from htpasswd -B)");
          }
          if (auto cost = bcrypt_cost(hash); !cost || *cost < 4 || *cost > kMaxBcryptCost) {
            return error_at(path, u.second, key + "." + user,
                            "bcrypt cost must be 4 to " + std::to_string(kMaxBcryptCost) +
                                " (each cost step doubles the time every request's check "
                                "takes; htpasswd -B -C 10 makes one)");
          }
          web.users[user] = hash;
        }
      } else if (key == "http_server_config") {
        // exporter-toolkit's HTTP/2 and header settings: nothing here changes what getcert
        // serves, so the section is accepted (one web config for every exporter) and ignored.
      } else {
        return error_at(path, entry.first, key,
                        "unknown key (tls_server_config, basic_auth_users, http_server_config)");
      }
    }
  } catch (const YAML::Exception& e) {
    return fail(Errc::invalid_argument,
                path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return web;
}

bool check_basic_auth(const WebConfig& web, const std::string& authorization) {
  const std::string prefix = "Basic ";
  if (authorization.rfind(prefix, 0) != 0) return false;
  std::string pair = decode_base64(authorization.substr(prefix.size()));
  const auto colon = pair.find(':');
  if (colon == std::string::npos) return false;
  const auto user = web.users.find(pair.substr(0, colon));
  if (user == web.users.end()) return false;
  const std::string password = pair.substr(colon + 1);
  OPENSSL_cleanse(pair.data(), pair.size());
  // crypt_data is large (tens of KiB): on the heap, one per check, as threads check at once.
  auto data = std::make_unique<crypt_data>();
  const char* hashed = crypt_r(password.c_str(), user->second.c_str(), data.get());
  const std::string& want = user->second;
  const bool ok = hashed != nullptr && std::string(hashed).size() == want.size() &&
                  CRYPTO_memcmp(hashed, want.data(), want.size()) == 0;
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return ok;
}

}  // namespace getcert::cli::exporter
