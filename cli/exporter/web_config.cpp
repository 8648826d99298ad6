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

namespace {

// Whether `password` hashes to `hash` (crypt(3)), compared in constant time.
bool password_matches(const std::string& password, const std::string& hash) {
  // crypt_data is large (tens of KiB): on the heap, one per check, as threads check at once.
  auto data = std::make_unique<crypt_data>();
  const char* hashed = crypt_r(password.c_str(), hash.c_str(), data.get());
  const bool ok = hashed != nullptr && std::string(hashed).size() == hash.size() &&
                  CRYPTO_memcmp(hashed, hash.data(), hash.size()) == 0;
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return ok;
}

// "user" and "password" of a Basic Authorization header; nullopt when it is not one.
std::optional<std::pair<std::string, std::string>> basic_credentials(
    const std::string& authorization) {
  const std::string prefix = "Basic ";
  if (authorization.rfind(prefix, 0) != 0) return std::nullopt;
  std::string pair = decode_base64(authorization.substr(prefix.size()));
  const auto colon = pair.find(':');
  if (colon == std::string::npos) {
    OPENSSL_cleanse(pair.data(), pair.size());
    return std::nullopt;
  }
  auto out = std::make_pair(pair.substr(0, colon), pair.substr(colon + 1));
  OPENSSL_cleanse(pair.data(), pair.size());
  return out;
}

}  // namespace

BasicAuth::BasicAuth(const WebConfig& web, std::chrono::seconds ttl)
    : users_(web.users), ttl_(ttl) {
  // The dummy has the salt and cost of the costliest configured hash and a digest no password
  // gives (bcrypt's alphabet, but not what crypt computes for that salt): an unknown user's
  // check takes as long as a known user's wrong password.
  for (const auto& [name, hash] : users_) {
    if (dummy_hash_.empty() ||
        bcrypt_cost(hash).value_or(0) > bcrypt_cost(dummy_hash_).value_or(0)) {
      dummy_hash_ = hash;
    }
  }
  if (dummy_hash_.size() > 29) {
    dummy_hash_.replace(29, std::string::npos, std::string(dummy_hash_.size() - 29, '.'));
  }
}

bool BasicAuth::check(const std::string& authorization) {
  if (users_.empty()) return true;
  auto credentials = basic_credentials(authorization);
  if (!credentials) return false;
  const auto user = users_.find(credentials->first);
  const std::string& hash = user != users_.end() ? user->second : dummy_hash_;

  // The cache key: SHA-256 of user, hash and password, so that a changed hash (a reload makes
  // a new BasicAuth anyway) or password never hits.
  std::string material = credentials->first + '\0' + hash + '\0' + credentials->second;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  const bool hashed =
      EVP_Digest(material.data(), material.size(), digest, &digest_len, EVP_sha256(), nullptr) == 1;
  OPENSSL_cleanse(material.data(), material.size());
  const std::string key(reinterpret_cast<const char*>(digest), hashed ? digest_len : 0);
  const auto now = std::chrono::steady_clock::now();
  if (hashed && user != users_.end()) {
    const std::lock_guard lock(mutex_);
    const auto it = ok_until_.find(key);
    if (it != ok_until_.end() && it->second > now) {
      OPENSSL_cleanse(credentials->second.data(), credentials->second.size());
      return true;
    }
  }
  const bool ok = password_matches(credentials->second, hash) && user != users_.end();
  OPENSSL_cleanse(credentials->second.data(), credentials->second.size());
  if (ok && hashed) {
    const std::lock_guard lock(mutex_);
    // Bounded: a flood of distinct good credentials (there are few users) cannot grow it.
    constexpr std::size_t kMaxCached = 1024;
    if (ok_until_.size() >= kMaxCached) {
      for (auto it = ok_until_.begin(); it != ok_until_.end();) {
        it = it->second <= now ? ok_until_.erase(it) : std::next(it);
      }
      if (ok_until_.size() >= kMaxCached) ok_until_.clear();
    }
    ok_until_[key] = now + ttl_;
  }
  return ok;
}

std::size_t BasicAuth::cached() const {
  const std::lock_guard lock(mutex_);
  return ok_until_.size();
}

}  // namespace getcert::cli::exporter
