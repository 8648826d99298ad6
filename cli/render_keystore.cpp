#include "render_keystore.hpp"

#include <ctime>
#include <sstream>

#include "getcert/text.hpp"
#include "p12_input.hpp"
#include "render_p12.hpp"

namespace getcert::cli {
namespace {

bool is_java(const pkcs12::Keystore& store) {
  return store.format == pkcs12::KeystoreFormat::jks ||
         store.format == pkcs12::KeystoreFormat::jceks;
}

Json alias_json(const std::optional<std::string>& alias) {
  return alias ? Json(valid_utf8(*alias)) : Json(nullptr);
}

std::string date_of(std::int64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "?";
  char buf[32];
  return std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0 ? buf : "?";
}

}  // namespace

Json keystore_json(const std::string& file, const pkcs12::Keystore& store, std::int64_t now) {
  Json j = p12_json(file, store.bundle, now);
  j["format"] = keystore_format_name(store);
  j["base64_wrapped"] = store.base64_wrapped;
  j["integrity_checked"] = store.integrity_checked;
  const auto& ids = store.bundle.identities;
  for (std::size_t i = 0; i < ids.size() && i < j["identities"].size(); ++i) {
    j["identities"][i]["alias"] = alias_json(ids[i].alias);
  }
  const auto& aliases = store.bundle.extra_cert_aliases;
  for (std::size_t i = 0; i < aliases.size() && i < j["extra_certs"].size(); ++i) {
    j["extra_certs"][i]["alias"] = alias_json(aliases[i]);
  }
  if (!is_java(store)) {
    j["keystore"] = nullptr;
    return j;
  }
  Json entries = Json::array();
  for (const auto& e : store.entries) {
    entries.push_back({{"alias", valid_utf8(e.alias)},
                       {"type", std::string(pkcs12::to_string(e.type))},
                       {"created", date_of(e.created)},
                       {"certificates", e.certificates},
                       {"protection", e.protection.empty() ? Json(nullptr) : Json(e.protection)},
                       {"key_decrypted", e.key_decrypted}});
  }
  j["pkcs12"] = nullptr;
  Json warnings = Json::array();
  for (const auto& w : store.bundle.info.warnings) warnings.push_back(valid_utf8(w));
  j["keystore"] = {{"version", store.version},
                   {"integrity_checked", store.integrity_checked},
                   {"entries", entries},
                   {"warnings", warnings}};
  return j;
}

std::string keystore_text(const std::string& file, const pkcs12::Keystore& store,
                          std::int64_t now) {
  const std::string format = "Format:     " + keystore_format_name(store) + "\n";
  if (!is_java(store)) {
    std::string text = p12_text(file, store.bundle, now);
    const auto first_line = text.find('\n');
    text.insert(first_line == std::string::npos ? text.size() : first_line + 1, format);
    return text;
  }
  std::ostringstream o;
  o << "File:       " << escape_untrusted(file) << "\n" << format;
  o << "Version:    " << store.version << "\n";
  o << "Integrity:  "
    << (store.integrity_checked ? "SHA-1 digest verified" : "NOT checked (no password given)")
    << "\n";
  o << "Entries:    " << store.entries.size() << "\n";
  for (const auto& e : store.entries) {
    o << "  " << pkcs12::to_string(e.type) << " \"" << escape_untrusted(e.alias) << "\", created "
      << date_of(e.created);
    if (e.type != pkcs12::KeystoreEntryType::secret_key) {
      o << ", " << e.certificates << " certificate" << (e.certificates == 1 ? "" : "s");
    }
    if (!e.protection.empty()) o << ", " << e.protection;
    if (e.type == pkcs12::KeystoreEntryType::private_key && !e.key_decrypted)
      o << " (key not decrypted)";
    if (e.type == pkcs12::KeystoreEntryType::secret_key) o << " (listed, never exported)";
    o << "\n";
  }
  for (const auto& w : store.bundle.info.warnings)
    o << "Warning:    " << escape_untrusted(w) << "\n";
  const auto& ids = store.bundle.identities;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    o << "\nIdentity " << i + 1;
    if (ids[i].alias) o << " \"" << escape_untrusted(*ids[i].alias) << "\"";
    o << ": " << ids[i].key.info().type;
    if (!ids[i].key.info().curve.empty()) o << " " << ids[i].key.info().curve;
    if (ids[i].key.info().bits > 0) o << " (" << ids[i].key.info().bits << " bits)";
    o << " private key\n";
    if (ids[i].leaf) {
      o << "[leaf]\n" << certificate_text(*ids[i].leaf, now, "  ");
    } else {
      o << "  (no certificate matches this key)\n";
    }
    for (std::size_t k = 0; k < ids[i].chain.size(); ++k) {
      o << "[chain " << k + 1 << "]\n" << certificate_text(ids[i].chain[k], now, "  ");
    }
  }
  const auto& extras = store.bundle.extra_certs;
  if (!extras.empty()) o << "\nOther certificates (" << extras.size() << "):\n";
  for (std::size_t k = 0; k < extras.size(); ++k) {
    o << "[" << k << "]";
    if (k < store.bundle.extra_cert_aliases.size() && store.bundle.extra_cert_aliases[k]) {
      o << " \"" << escape_untrusted(*store.bundle.extra_cert_aliases[k]) << "\"";
    }
    o << "\n" << certificate_text(extras[k], now, "  ");
  }
  return o.str();
}

}  // namespace getcert::cli
