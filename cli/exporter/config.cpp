#include "exporter/config.hpp"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>

#include "exporter/yaml_file.hpp"
#include "getcert/keystore.hpp"
#include "getcert/pkcs12.hpp"
#include "getcert/starttls.hpp"
#include "internal/try.hpp"
#include "password.hpp"
#include "time_args.hpp"
#include "verify_args.hpp"

namespace getcert::cli::exporter {
namespace {

// Errors carry "file:line: key: ..." so that an operator can jump to the line.
class ConfigError {
 public:
  explicit ConfigError(std::string path) : path_(std::move(path)) {}
  tl::unexpected<Error> at(const YAML::Node& node, const std::string& key,
                           const std::string& what) const {
    const int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return fail(Errc::invalid_argument,
                path_ + ":" + std::to_string(line) + ": " + key + ": " + what);
  }

 private:
  std::string path_;
};

using Keys = std::set<std::string>;

// Rejects keys outside `known`: a misspelt option must not be ignored.
Result<void> only_keys(const ConfigError& err, const YAML::Node& map, const std::string& where,
                       const Keys& known) {
  if (!map.IsMap()) return err.at(map, where, "must be a mapping");
  for (const auto& entry : map) {
    const auto key = entry.first.Scalar();
    if (!known.contains(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return err.at(entry.first, where + "." + key, "unknown key (known: " + list + ")");
    }
  }
  return {};
}

Result<std::string> scalar(const ConfigError& err, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) return err.at(node, key, "must be a single value");
  return node.Scalar();
}

Result<bool> boolean(const ConfigError& err, const YAML::Node& node, const std::string& key) {
  GETCERT_TRY_ASSIGN(auto text, scalar(err, node, key));
  if (text == "true") return true;
  if (text == "false") return false;
  return err.at(node, key, "must be true or false, not '" + text + "'");
}

Result<std::vector<std::string>> string_list(const ConfigError& err, const YAML::Node& node,
                                             const std::string& key) {
  if (!node.IsSequence()) return err.at(node, key, "must be a list");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    GETCERT_TRY_ASSIGN(auto item, scalar(err, node[i], key + "[" + std::to_string(i) + "]"));
    out.push_back(item);
  }
  return out;
}

Result<std::chrono::milliseconds> duration(const ConfigError& err, const YAML::Node& node,
                                           const std::string& key) {
  GETCERT_TRY_ASSIGN(auto text, scalar(err, node, key));
  auto d = parse_duration(key, text, std::chrono::seconds(1));
  if (!d) return err.at(node, key, "'" + text + "' is not a duration like 10s, 500ms or 14d");
  return *d;
}

Result<std::string> secret_from(const std::string& file, const std::string& env,
                                const std::string& what) {
  PasswordArgs args;
  args.file = file;
  args.env = env;
  args.regular_file_only = true;  // a service: a FIFO in a password file's place would hang it
  std::istringstream no_input;
  std::ostringstream sink;
  Terminal none{no_input, sink, sink};
  auto read = read_password(args, none);
  if (!read) return fail(read.error().code, what + ": " + read.error().message);
  if (!*read) return std::string();
  return std::string(read->value().data(), read->value().size());
}

// A client identity's file: regular, bounded (a service reads it on every reload).
std::string slurp(const std::string& path, bool& ok) {
  auto bytes = internal::read_bounded_file(path, pkcs12::kMaxInputSize, "'" + path + "'",
                                           internal::FileKinds::regular);
  ok = static_cast<bool>(bytes);
  return ok ? std::move(*bytes) : std::string();
}

// Loads the identity now, so a wrong password or a missing file stops the start (or the
// reload), never a scrape.
Result<ClientIdentity> load_identity(const ConfigError& err, const YAML::Node& node,
                                     const std::string& key, const ClientIdentitySource& src) {
  if (!src.cert_file.empty()) {
    bool ok = false;
    std::string cert = slurp(src.cert_file, ok);
    if (!ok) return err.at(node, key + ".cert_file", "cannot read " + src.cert_file);
    std::string key_pem = slurp(src.key_file, ok);
    if (!ok) return err.at(node, key + ".key_file", "cannot read " + src.key_file);
    Secret secret(key_pem);
    std::fill(key_pem.begin(), key_pem.end(), '\0');
    return ClientIdentity{std::move(cert), std::move(secret)};
  }
  bool ok = false;
  std::string bytes_text = slurp(src.keystore_file, ok);
  if (!ok) return err.at(node, key + ".keystore_file", "cannot read " + src.keystore_file);
  auto password = secret_from(src.password_file, src.password_env, key);
  if (!password) return err.at(node, key, password.error().message);
  pkcs12::KeystoreOptions options;
  if (!src.password_file.empty() || !src.password_env.empty()) options.password = *password;
  std::fill(password->begin(), password->end(), '\0');
  const std::vector<std::uint8_t> bytes(bytes_text.begin(), bytes_text.end());
  auto store = pkcs12::read_keystore(bytes, options);
  if (!store) {
    return err.at(node, key + ".keystore_file", src.keystore_file + ": " + store.error().message);
  }
  for (const auto& id : store->bundle.identities) {
    if (!id.leaf) continue;
    // The server has the root already; sending it only costs bytes.
    return ClientIdentity{to_pem(leaf_plus_intermediates(*id.leaf, id.chain)), id.key.pem()};
  }
  return err.at(node, key + ".keystore_file",
                src.keystore_file + " holds no private key with its certificate");
}

Result<Module> parse_module(const ConfigError& err, const std::string& name,
                            const YAML::Node& node) {
  const std::string where = "modules." + name;
  GETCERT_TRY(
      only_keys(err, node, where, {"protocol",         "starttls_name", "timeout",
                                   "connect_timeout",  "proxy",         "server_name",
                                   "no_sni",           "alpn",          "tls_min",
                                   "tls_max",          "ca_file",       "ca_dir",
                                   "fetch_missing",    "verify_name",   "fetch_private_addresses",
                                   "purpose",          "revocation",    "pins",
                                   "profile",          "max_depth",     "crl_files",
                                   "expiry_window",    "client",        "file_password_file",
                                   "file_password_env"}));
  Module m;
  m.name = name;
  VerifyArgs verify;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string full = where + "." + key;
    const YAML::Node& v = entry.second;
    auto text = [&]() { return scalar(err, v, full); };
    if (key == "protocol") {
      GETCERT_TRY_ASSIGN(auto p, text());
      // "tls" is TLS from the first byte; the rest are the library's STARTTLS spellings.
      if (p == "tls") {
        m.fetch.connect.starttls = StartTls::none;
        m.default_port = 443;
      } else if (const auto* found = find_starttls(p)) {
        m.fetch.connect.starttls = found->protocol;
        m.default_port = found->default_port;
      } else {
        std::string list = "tls";
        for (const auto& s : starttls_protocols()) list += ", " + std::string(s.spelling);
        return err.at(v, full, "'" + p + "' is not one of " + list);
      }
    } else if (key == "starttls_name") {
      GETCERT_TRY_ASSIGN(auto s, text());
      m.fetch.connect.starttls_name = s;
    } else if (key == "timeout" || key == "connect_timeout") {
      GETCERT_TRY_ASSIGN(auto d, duration(err, v, full));
      if (d.count() == 0) return err.at(v, full, "must be greater than zero");
      (key == "timeout" ? m.fetch.connect.timeout : m.fetch.connect.connect_timeout) = d;
    } else if (key == "proxy") {
      GETCERT_TRY_ASSIGN(auto s, text());
      if (s.rfind("http://", 0) != 0 && s.rfind("socks5://", 0) != 0 &&
          s.rfind("socks5h://", 0) != 0) {
        return err.at(v, full, "must start with http://, socks5:// or socks5h://");
      }
      m.fetch.connect.proxy = s;
    } else if (key == "server_name") {
      GETCERT_TRY_ASSIGN(auto s, text());
      m.fetch.connect.sni = s;
    } else if (key == "no_sni") {
      GETCERT_TRY_ASSIGN(auto b, boolean(err, v, full));
      m.fetch.connect.send_sni = !b;
    } else if (key == "alpn") {
      GETCERT_TRY_ASSIGN(auto l, string_list(err, v, full));
      m.fetch.connect.alpn = l;
    } else if (key == "tls_min" || key == "tls_max") {
      GETCERT_TRY_ASSIGN(auto s, text());
      const std::map<std::string, TlsVersion> versions{{"1.0", TlsVersion::tls1_0},
                                                       {"1.1", TlsVersion::tls1_1},
                                                       {"1.2", TlsVersion::tls1_2},
                                                       {"1.3", TlsVersion::tls1_3}};
      const auto found = versions.find(s);
      if (found == versions.end()) return err.at(v, full, "must be 1.0, 1.1, 1.2 or 1.3");
      (key == "tls_min" ? m.fetch.connect.tls_min : m.fetch.connect.tls_max) = found->second;
    } else if (key == "ca_file" || key == "ca_dir") {
      GETCERT_TRY_ASSIGN(auto s, text());
      // Checked now: a trust store that is missing would fail every probe of the module.
      std::error_code ec;
      const auto status = std::filesystem::status(s, ec);
      const bool want_dir = key == "ca_dir";
      if (ec || (want_dir ? !std::filesystem::is_directory(status)
                          : !std::filesystem::is_regular_file(status))) {
        return err.at(v, full,
                      "no such " + std::string(want_dir ? "directory" : "file") + ": " + s);
      }
      (key == "ca_file" ? verify.ca_file : verify.ca_dir) = s;
    } else if (key == "fetch_missing") {
      GETCERT_TRY_ASSIGN(auto b, boolean(err, v, full));
      verify.no_fetch_missing = !b;
    } else if (key == "fetch_private_addresses") {
      GETCERT_TRY_ASSIGN(auto b, boolean(err, v, full));
      m.fetch_private_addresses = b;
    } else if (key == "verify_name") {
      GETCERT_TRY_ASSIGN(auto b, boolean(err, v, full));
      m.verify_name = b;
    } else if (key == "purpose") {
      GETCERT_TRY_ASSIGN(auto s, text());
      if (s == "server") {
        verify.purpose = Purpose::server;
      } else if (s == "client") {
        verify.purpose = Purpose::client;
      } else if (s == "any") {
        verify.purpose = Purpose::any;
      } else {
        return err.at(v, full, "must be server, client or any");
      }
    } else if (key == "revocation") {
      GETCERT_TRY_ASSIGN(auto s, text());
      if (s == "check") {
        verify.check_revocation = true;
      } else if (s == "require") {
        verify.require_revocation = true;
      } else if (s != "off") {
        return err.at(v, full, "must be off, check or require");
      }
    } else if (key == "pins") {
      GETCERT_TRY_ASSIGN(auto l, string_list(err, v, full));
      verify.pins = l;
    } else if (key == "profile") {
      GETCERT_TRY_ASSIGN(auto s, text());
      if (!profile_from_string(s))
        return err.at(v, full, "must be webpki, openssl, rfc5280 or cabf");
      verify.profile = s;
    } else if (key == "max_depth") {
      GETCERT_TRY_ASSIGN(auto s, text());
      verify.max_depth = s;
      verify.max_depth_given = true;
    } else if (key == "crl_files") {
      GETCERT_TRY_ASSIGN(auto l, string_list(err, v, full));
      verify.crl_files = l;
    } else if (key == "expiry_window") {
      GETCERT_TRY_ASSIGN(auto d, duration(err, v, full));
      m.expiry_window_seconds = d.count() / 1000;
    } else if (key == "file_password_file" || key == "file_password_env") {
      GETCERT_TRY_ASSIGN(auto s, text());
      (key == "file_password_file" ? m.file_password_file : m.file_password_env) = s;
    } else if (key == "client") {
      GETCERT_TRY(
          only_keys(err, v, full,
                    {"cert_file", "key_file", "keystore_file", "password_file", "password_env"}));
      ClientIdentitySource src;
      for (const auto& c : v) {
        GETCERT_TRY_ASSIGN(auto s, scalar(err, c.second, full + "." + c.first.Scalar()));
        const std::string ck = c.first.Scalar();
        if (ck == "cert_file") src.cert_file = s;
        if (ck == "key_file") src.key_file = s;
        if (ck == "keystore_file") src.keystore_file = s;
        if (ck == "password_file") src.password_file = s;
        if (ck == "password_env") src.password_env = s;
      }
      const bool pem = !src.cert_file.empty() || !src.key_file.empty();
      if (pem && (src.cert_file.empty() || src.key_file.empty())) {
        return err.at(v, full, "cert_file and key_file go together");
      }
      if (pem == !src.keystore_file.empty()) {
        return err.at(v, full, "name either cert_file and key_file, or keystore_file");
      }
      if (!src.password_file.empty() && !src.password_env.empty()) {
        return err.at(v, full, "name password_file or password_env, not both");
      }
      GETCERT_TRY_ASSIGN(auto identity, load_identity(err, v, full, src));
      m.client = src;
      m.identity = std::move(identity);
    }
  }
  auto settings = build_verify_settings(verify, /*online=*/true);
  if (!settings) return err.at(node, where, settings.error().message);
  m.fetch.verify = settings->options;
  m.fetch.connect.client_identity = m.identity;
  if (m.fetch.connect.tls_min && m.fetch.connect.tls_max &&
      *m.fetch.connect.tls_min > *m.fetch.connect.tls_max) {
    return err.at(node, where, "tls_min is above tls_max");
  }
  return m;
}

Result<std::uint16_t> port_number(const ConfigError& err, const YAML::Node& node,
                                  const std::string& key, const std::string& text) {
  if (text.empty() || text.size() > 5 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return err.at(node, key, "'" + text + "' is not a port number");
  }
  const long value = std::strtol(text.c_str(), nullptr, 10);
  if (value < 1 || value > 65535) return err.at(node, key, "port " + text + " is not in 1-65535");
  return static_cast<std::uint16_t>(value);
}

Result<AllowList> parse_allow(const ConfigError& err, const YAML::Node& node) {
  GETCERT_TRY(only_keys(err, node, "allow", {"hosts", "cidrs", "ports", "files"}));
  AllowList allow;
  allow.present = true;
  for (const auto& entry : node) {
    const std::string key = "allow." + entry.first.Scalar();
    GETCERT_TRY_ASSIGN(auto list, string_list(err, entry.second, key));
    const std::string which = entry.first.Scalar();
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string item = list[i];
      const YAML::Node& at = entry.second[i];
      const std::string item_key = key + "[" + std::to_string(i) + "]";
      if (which == "hosts") {
        for (auto& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        allow.host_patterns.push_back(item);
      } else if (which == "cidrs") {
        auto cidr = parse_cidr(item);
        if (!cidr) return err.at(at, item_key, "'" + item + "' is not an address or CIDR");
        allow.cidrs.push_back(*cidr);
      } else if (which == "ports") {
        const auto dash = item.find('-');
        auto lo = port_number(err, at, item_key, item.substr(0, dash));
        if (!lo) return tl::unexpected(lo.error());
        auto hi =
            dash == std::string::npos ? lo : port_number(err, at, item_key, item.substr(dash + 1));
        if (!hi) return tl::unexpected(hi.error());
        if (*hi < *lo) return err.at(at, item_key, "the range '" + item + "' is empty");
        allow.ports.emplace_back(*lo, *hi);
      } else {
        if (item.empty() || item[0] != '/') {
          return err.at(at, item_key, "must be an absolute path pattern");
        }
        allow.file_patterns.push_back(item);
      }
    }
  }
  return allow;
}

}  // namespace

std::optional<Cidr> parse_cidr(const std::string& text) {
  const auto slash = text.find('/');
  const std::string addr = text.substr(0, slash);
  Cidr c;
  unsigned char buf[16] = {};
  if (inet_pton(AF_INET, addr.c_str(), buf) == 1) {
    c.address.assign(buf, buf + 4);
  } else if (inet_pton(AF_INET6, addr.c_str(), buf) == 1) {
    c.address.assign(buf, buf + 16);
  } else {
    return std::nullopt;
  }
  const int max = static_cast<int>(c.address.size()) * 8;
  c.prefix = max;
  if (slash != std::string::npos) {
    const std::string bits = text.substr(slash + 1);
    if (bits.empty() || bits.size() > 3 ||
        bits.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    c.prefix = std::stoi(bits);
    if (c.prefix > max) return std::nullopt;
  }
  return c;
}

bool cidr_contains(const Cidr& cidr, const std::vector<std::uint8_t>& addr) {
  if (addr.size() != cidr.address.size()) return false;
  int left = cidr.prefix;
  for (std::size_t i = 0; i < addr.size() && left > 0; ++i, left -= 8) {
    const int bits = std::min(left, 8);
    const auto mask = static_cast<std::uint8_t>(0xFF << (8 - bits));
    if ((addr[i] & mask) != (cidr.address[i] & mask)) return false;
  }
  return true;
}

Config default_config() {
  Config c;
  c.path = "(built-in)";
  Module m;
  m.name = "default";
  c.modules.emplace(m.name, std::move(m));
  return c;
}

Result<Config> load_config(const std::string& path) {
  GETCERT_TRY_ASSIGN(auto loaded, load_yaml_file(path, "config file"));
  const YAML::Node root = loaded;  // a handle: copies share the document
  const ConfigError err(path);
  Config config;
  config.path = path;
  try {
    if (!root.IsMap()) return err.at(root, "(top level)", "must be a mapping with modules:");
    GETCERT_TRY(only_keys(err, root, "(top level)", {"modules", "allow"}));
    const YAML::Node modules = root["modules"];
    if (!modules || !modules.IsMap() || modules.size() == 0) {
      return err.at(modules ? modules : root, "modules", "must map at least one module name");
    }
    for (const auto& entry : modules) {
      const std::string name = entry.first.Scalar();
      if (name.empty() ||
          name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string::npos) {
        return err.at(entry.first, "modules." + name,
                      "a module name is letters, digits, '_', '-' and '.'");
      }
      GETCERT_TRY_ASSIGN(
          auto m,
          parse_module(err, name,
                       entry.second.IsNull() ? YAML::Node(YAML::NodeType::Map) : entry.second));
      config.modules.emplace(name, std::move(m));
    }
    if (const YAML::Node allow = root["allow"]) {
      GETCERT_TRY_ASSIGN(auto a, parse_allow(err, allow));
      config.allow = std::move(a);
    }
  } catch (const YAML::Exception& e) {
    return fail(Errc::invalid_argument,
                path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return config;
}

}  // namespace getcert::cli::exporter
