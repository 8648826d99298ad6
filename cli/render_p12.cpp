#include "render_p12.hpp"

#include <sstream>

#include "getcert/text.hpp"

namespace getcert::cli {
namespace {

Json attributes_json(const pkcs12::BagAttributes& a) {
  Json all = Json::array();
  for (const auto& attr : a.all) {
    all.push_back({{"oid", attr.oid}, {"name", attr.name}, {"value", attr.value}});
  }
  return {{"friendly_name", a.friendly_name.empty() ? Json(nullptr) : Json(a.friendly_name)},
          {"local_key_id", a.local_key_id.empty() ? Json(nullptr) : Json(a.local_key_id)},
          {"all", all}};
}

Json key_json(const KeyInfo& k) {
  return {{"type", k.type},
          {"bits", k.bits},
          {"curve", k.curve.empty() ? Json(nullptr) : Json(k.curve)}};
}

std::string key_text(const KeyInfo& k) {
  std::string out = escape_untrusted(k.type);
  if (!k.curve.empty()) out += " " + escape_untrusted(k.curve);
  if (k.bits > 0) out += " (" + std::to_string(k.bits) + " bits)";
  return out;
}

std::string attributes_text(const pkcs12::BagAttributes& a) {
  std::string out;
  for (const auto& attr : a.all) {
    out += (out.empty() ? "" : "; ") + escape_untrusted(attr.name) + "=" +
           escape_untrusted(attr.value);
  }
  return out;
}

}  // namespace

Json p12_json(const std::string& file, const pkcs12::Bundle& b, std::int64_t now) {
  const auto& info = b.info;
  Json safes = Json::array();
  for (const auto& s : info.safes) {
    Json bags = Json::array();
    for (const auto& bag : s.bags) {
      bags.push_back({{"type", bag.type},
                      {"description", bag.description},
                      {"encryption", bag.encryption.empty() ? Json(nullptr) : Json(bag.encryption)},
                      {"iterations", bag.iterations},
                      {"nesting", bag.nesting},
                      {"attributes", attributes_json(bag.attributes)}});
    }
    safes.push_back({{"content_type", s.content_type},
                     {"encryption", s.encryption},
                     {"iterations", s.iterations},
                     {"bags", bags}});
  }
  Json identities = Json::array();
  for (const auto& id : b.identities) {
    Json chain = Json::array();
    for (const auto& c : id.chain) chain.push_back(certificate_json(c, now));
    identities.push_back({{"key", key_json(id.key.info())},
                          {"key_attributes", attributes_json(id.key.attributes())},
                          {"leaf", id.leaf ? certificate_json(*id.leaf, now) : Json(nullptr)},
                          {"chain", chain}});
  }
  Json extras = Json::array();
  for (const auto& c : b.extra_certs) extras.push_back(certificate_json(c, now));
  return {{"schema", kJsonSchema},
          {"file", file},
          {"pkcs12",
           {{"version", info.version},
            {"mac",
             {{"present", info.mac.present},
              {"algorithm", info.mac.present ? Json(info.mac.algorithm) : Json(nullptr)},
              {"iterations", info.mac.iterations},
              {"salt_length", info.mac.salt_length},
              {"verified", info.mac.verified}}},
            {"integrity_protected", info.mac.present && info.mac.verified},
            {"password_used", std::string(pkcs12::to_string(info.password_used))},
            {"legacy_provider_used", info.legacy_provider_used},
            {"safes", safes},
            {"warnings", info.warnings}}},
          {"identities", identities},
          {"extra_certs", extras}};
}

std::string p12_text(const std::string& file, const pkcs12::Bundle& b, std::int64_t now) {
  std::ostringstream o;
  const auto& info = b.info;
  o << "File:       " << escape_untrusted(file) << "\n";
  o << "MAC:        ";
  if (info.mac.present) {
    o << escape_untrusted(info.mac.algorithm) << ", " << info.mac.iterations << " iterations, salt "
      << info.mac.salt_length << " bytes, " << (info.mac.verified ? "verified" : "NOT verified")
      << "\n";
  } else {
    o << "none (integrity unprotected)\n";
  }
  o << "Password:   " << pkcs12::to_string(info.password_used)
    << (info.legacy_provider_used ? "; legacy algorithms (OpenSSL legacy provider loaded)" : "")
    << "\n";
  for (std::size_t i = 0; i < info.safes.size(); ++i) {
    const auto& s = info.safes[i];
    o << "Safe " << i << ":     " << escape_untrusted(s.content_type) << ", "
      << escape_untrusted(s.encryption);
    if (s.iterations > 0) o << ", " << s.iterations << " iterations";
    o << "\n";
    for (const auto& bag : s.bags) {
      o << "  " << std::string(static_cast<std::size_t>(bag.nesting) * 2, ' ')
        << escape_untrusted(bag.type) << ": " << escape_untrusted(bag.description);
      if (!bag.encryption.empty())
        o << " [" << escape_untrusted(bag.encryption) << ", " << bag.iterations << " iterations]";
      const std::string attrs = attributes_text(bag.attributes);
      if (!attrs.empty())
        o << "\n    " << std::string(static_cast<std::size_t>(bag.nesting) * 2, ' ') << attrs;
      o << "\n";
    }
  }
  for (const auto& w : info.warnings) o << "Warning:    " << escape_untrusted(w) << "\n";
  for (std::size_t i = 0; i < b.identities.size(); ++i) {
    const auto& id = b.identities[i];
    o << "\nIdentity " << i + 1 << ": " << key_text(id.key.info()) << " private key";
    if (!id.key.attributes().friendly_name.empty()) {
      o << " \"" << escape_untrusted(id.key.attributes().friendly_name) << "\"";
    }
    o << "\n";
    if (id.leaf) {
      o << "[leaf]\n" << certificate_text(*id.leaf, now, "  ");
    } else {
      o << "  (no certificate matches this key)\n";
    }
    for (std::size_t j = 0; j < id.chain.size(); ++j) {
      o << "[chain " << j + 1 << "]\n" << certificate_text(id.chain[j], now, "  ");
    }
  }
  if (!b.extra_certs.empty()) {
    o << "\nOther certificates (" << b.extra_certs.size() << "):\n";
    for (std::size_t j = 0; j < b.extra_certs.size(); ++j) {
      o << "[" << j << "]\n" << certificate_text(b.extra_certs[j], now, "  ");
    }
  }
  return o.str();
}

}  // namespace getcert::cli
