// decode(): walks the PFX skeleton with the BER reader, verifies the MAC, decrypts every safe
// and shrouded key with the candidate passwords and collects keys and certificates.

#include <algorithm>
#include <set>
#include <string>

#include "algorithms.hpp"
#include "assemble.hpp"
#include "attributes.hpp"
#include "ber.hpp"
#include "budget.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "mac.hpp"
#include "password.hpp"
#include "pbe.hpp"
#include "private_key.hpp"

namespace getcert::pkcs12 {
namespace detail {
namespace {

bool looks_like_pem(Bytes data) {
  std::size_t i = 0;
  while (i < data.size() &&
         (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n' ||
          data[i] == 0xEF || data[i] == 0xBB || data[i] == 0xBF)) {
    ++i;
  }
  static constexpr std::string_view kBegin = "-----BEGIN";
  return data.size() - i >= kBegin.size() &&
         std::equal(kBegin.begin(), kBegin.end(), data.begin() + static_cast<std::ptrdiff_t>(i));
}

std::string describe_key(const KeyInfo& k) {
  std::string out = k.type;
  if (!k.curve.empty()) {
    out += " " + k.curve;
  } else if (k.bits > 0) {
    out += " " + std::to_string(k.bits);
  }
  return out + " private key";
}

// What the planning pass saw: one password guess for each item whose cost is visible before
// anything is decrypted.
struct VisibleWork {
  std::uint64_t cost = 0;
  bool mac = false;
  std::size_t safes = 0;  // encrypted safes
  std::size_t keys = 0;   // shrouded keys outside encrypted safes

  std::string describe() const {
    std::vector<std::string> parts;
    if (mac) parts.emplace_back("the MAC");
    auto count = [&](std::size_t n, const char* one, const char* many) {
      if (n > 0) parts.push_back(std::to_string(n) + " " + (n == 1 ? one : many));
    };
    count(safes, "encrypted safe", "encrypted safes");
    count(keys, "shrouded key", "shrouded keys");
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
      out += parts[i];
    }
    return out;
  }
};

// The content of a data ContentInfo: [0] EXPLICIT OCTET STRING.
Result<std::vector<std::uint8_t>> data_content(const Element& explicit0) {
  GETCERT_TRY_ASSIGN(auto cr, children(explicit0, "data safe"));
  GETCERT_TRY_ASSIGN(auto octets_el, cr.expect(kTagOctetString, "data safe"));
  return octet_string(octets_el, "data safe");
}

struct EncryptedSafe {
  PbeAlgorithm alg;
  std::optional<std::vector<std::uint8_t>> ciphertext;  // nullopt: no encrypted content
};

// The content of an encryptedData ContentInfo.
Result<EncryptedSafe> encrypted_content(const Element& explicit0, std::uint64_t max_iterations,
                                        const std::string& where) {
  // EncryptedData ::= SEQUENCE { version INTEGER, encryptedContentInfo EncryptedContentInfo }
  // EncryptedContentInfo ::= SEQUENCE { contentType OID, contentEncryptionAlgorithm AlgId,
  //                                     encryptedContent [0] IMPLICIT OCTET STRING OPTIONAL }
  GETCERT_TRY_ASSIGN(auto cr, children(explicit0, "encrypted safe"));
  GETCERT_TRY_ASSIGN(auto ed, cr.expect(kTagSequence, "EncryptedData"));
  GETCERT_TRY_ASSIGN(auto edr, children(ed, "EncryptedData"));
  GETCERT_TRY(edr.expect(kTagInteger, "EncryptedData version"));
  GETCERT_TRY_ASSIGN(auto eci, edr.expect(kTagSequence, "EncryptedContentInfo"));
  GETCERT_TRY_ASSIGN(auto eir, children(eci, "EncryptedContentInfo"));
  GETCERT_TRY(eir.expect(kTagOid, "EncryptedContentInfo content type"));
  GETCERT_TRY_ASSIGN(auto alg_el, eir.expect(kTagSequence, "EncryptedContentInfo algorithm"));
  GETCERT_TRY_ASSIGN(auto alg, parse_pbe(alg_el, max_iterations, where.c_str()));
  EncryptedSafe out{std::move(alg), std::nullopt};
  auto enc = eir.optional(TagClass::context, 0, "encrypted content");
  if (!enc) return tl::unexpected(enc.error());
  if (*enc) {
    GETCERT_TRY_ASSIGN(auto ciphertext, string_value(**enc, "encrypted content"));
    out.ciphertext = std::move(ciphertext);
  }
  return out;
}

// A reader over the SafeBags of SafeContents ::= SEQUENCE OF SafeBag.
Result<BerReader> safe_bags(Bytes data) {
  GETCERT_TRY_ASSIGN(auto sc, parse_single(data, "SafeContents"));
  if (!sc.is_universal(kTagSequence)) {
    return fail(Errc::malformed_input, "malformed PKCS#12: SafeContents is not a SEQUENCE");
  }
  return children(sc, "SafeContents");
}

// SafeBag and CertBag both open with `type OBJECT IDENTIFIER` ("<what> type") ...
Result<std::string> read_type(BerReader& r, const std::string& what) {
  const std::string name = what + " type";
  GETCERT_TRY_ASSIGN(auto el, r.expect(kTagOid, name.c_str()));
  return oid(el, name.c_str());
}

// ... followed by `value [0] EXPLICIT ANY` ("<what> value"): returns the [0] wrapper.
Result<Element> read_explicit(BerReader& r, const std::string& what) {
  const std::string name = what + " value";
  auto wrapper = r.next(name.c_str());
  if (!wrapper) return wrapper;
  if (!wrapper->is_context(0) || !wrapper->constructed) {
    return fail(Errc::malformed_input, "malformed PKCS#12: " + name + " is not [0] EXPLICIT");
  }
  return wrapper;
}

// The value of a SafeBag whose type has been read: the element inside the [0] wrapper.
Result<Element> safe_bag_value(BerReader& r) {
  auto wrapper = read_explicit(r, "SafeBag");
  if (!wrapper) return wrapper;
  GETCERT_TRY_ASSIGN(auto wr, children(*wrapper, "SafeBag value"));
  return wr.next("SafeBag value");
}

// Adds one attempt at every shrouded key in SafeContents `data` (nested SafeContents bags
// included, as deep as the walk follows them) to `work`. Stops at the first error: the walk
// meets the same error at the same place.
Result<void> scan_shrouded_keys(Bytes data, int nesting, std::uint64_t max_iterations,
                                VisibleWork& work) {
  GETCERT_TRY_ASSIGN(auto r, safe_bags(data));
  while (!r.empty()) {
    GETCERT_TRY_ASSIGN(auto bag, r.expect(kTagSequence, "SafeBag"));
    GETCERT_TRY_ASSIGN(auto br, children(bag, "SafeBag"));
    GETCERT_TRY_ASSIGN(auto id, read_type(br, "SafeBag"));
    if (id != oids::kShroudedKeyBag && id != oids::kSafeContentsBag) continue;
    GETCERT_TRY_ASSIGN(auto value, safe_bag_value(br));
    if (id == oids::kSafeContentsBag) {
      if (nesting + 1 > kMaxSafeContentsNesting) {
        return fail(Errc::malformed_input, "malformed PKCS#12: SafeContents nested too deep");
      }
      auto ok = scan_shrouded_keys(value.encoding, nesting + 1, max_iterations, work);
      if (!ok) return ok;
      continue;
    }
    GETCERT_TRY_ASSIGN(auto er, children(value, "EncryptedPrivateKeyInfo"));
    GETCERT_TRY_ASSIGN(auto alg_el, er.expect(kTagSequence, "shrouded key algorithm"));
    GETCERT_TRY_ASSIGN(auto alg, parse_pbe(alg_el, max_iterations, "a shrouded key bag"));
    work.cost = add_cost(work.cost, attempt_cost(alg));
    ++work.keys;
  }
  return {};
}

// Only a limit is worth reporting before the walk: every other error the walk reports itself,
// in its usual order (a wrong password before a malformed bag behind the MAC).
Result<void> keep_limit_errors(const Result<void>& scanned) {
  if (!scanned && scanned.error().code == Errc::limit_exceeded) return scanned;
  return {};
}

class Walker {
 public:
  explicit Walker(const DecodeOptions& options)
      : options_(options),
        candidates_(password_candidates(options.password)),
        budget_(options.max_iterations) {}

  Result<Bundle> run(Bytes pfx);

 private:
  Result<void> reserve_visible_work(const MacData* mac, Bytes auth_safe);
  Result<void> read_safe(const Element& content_info, std::size_t index);
  Result<void> read_safe_contents(Bytes data, int nesting, SafeInfo& safe);
  Result<void> read_bag(const Element& bag, int nesting, SafeInfo& safe);
  Result<void> read_cert_bag(const Element& value, BagInfo& info, const BagAttributes& attrs);
  template <class Validate>
  Result<SecureBytes> decrypt_any(const PbeAlgorithm& alg, Bytes ciphertext,
                                  const std::string& what, Validate validate);
  // The shrouded key bags' own password (DecodeOptions::key_password), else decrypt_any().
  Result<SecureBytes> decrypt_key_bag(const PbeAlgorithm& alg, Bytes ciphertext);
  // Each warning once. A set, not a search of the list: a file of thousands of bags that each
  // earn a warning must not cost a comparison with every earlier one.
  void warn(std::string message) {
    if (warned_.insert(message).second) info_.warnings.push_back(std::move(message));
  }

  const DecodeOptions& options_;
  std::vector<PasswordForms> candidates_;
  std::optional<std::size_t> form_;  // the candidate the MAC (or a decryption) proved
  bool mac_verified_ = false;
  WorkBudget budget_;
  std::set<std::string> warned_;
  Info info_;
  Contents contents_;
};

template <class Validate>
Result<SecureBytes> Walker::decrypt_any(const PbeAlgorithm& alg, Bytes ciphertext,
                                        const std::string& what, Validate validate) {
  // The password that verified the MAC (or decrypted something before) first; the other
  // "no password" form after it, since a few producers key the MAC and the encryption with
  // different ones (NULL vs empty).
  std::vector<std::size_t> order;
  if (form_) order.push_back(*form_);
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    if (!form_ || i != *form_) order.push_back(i);
  }
  // Forms with the same bytes derive the same key (PBKDF2 sees the absent and the empty
  // password alike): each distinct one is paid for and tried once.
  std::vector<const SecureBytes*> tried;
  for (const std::size_t i : order) {
    const auto& variants = alg.uses_bmp_password() ? candidates_[i].bmp : candidates_[i].raw;
    for (const auto& variant : variants) {
      if (std::any_of(tried.begin(), tried.end(),
                      [&](const SecureBytes* t) { return *t == variant.bytes; })) {
        continue;
      }
      GETCERT_TRY(budget_.spend(attempt_cost(alg), tried.empty(), "the " + what));
      tried.push_back(&variant.bytes);
      auto plain = pbe_decrypt(alg, variant, ciphertext, info_.legacy_provider_used);
      if (!plain) return tl::unexpected(plain.error());
      if (!*plain || !validate(**plain)) continue;
      if (!form_) form_ = i;
      if (variant.reinterpreted) {
        warn("the password only decrypted the " + what +
             " in its ISO-8859-1 form (the producer did not encode it as UTF-8)");
      }
      return std::move(**plain);
    }
  }
  const bool no_password = !options_.password || options_.password->empty();
  if (mac_verified_) {
    return fail(Errc::wrong_password,
                "wrong password: the MAC verified but the " + what +
                    " could not be decrypted with the same password (the file may use a separate "
                    "password for it)");
  }
  if (no_password) {
    return fail(Errc::wrong_password,
                "a password is required: the " + what +
                    " could not be decrypted with the empty or absent password");
  }
  return fail(Errc::wrong_password, "wrong password (could not decrypt the " + what +
                                        "; the file has no MAC to check the password against)");
}

Result<SecureBytes> Walker::decrypt_key_bag(const PbeAlgorithm& alg, Bytes ciphertext) {
  auto is_key = [](const SecureBytes& p) { return is_pkcs8(p); };
  if (!options_.key_password) return decrypt_any(alg, ciphertext, "private key", is_key);
  for (const auto& forms : password_candidates(options_.key_password)) {
    for (const auto& variant : alg.uses_bmp_password() ? forms.bmp : forms.raw) {
      auto plain = pbe_decrypt(alg, variant, ciphertext, info_.legacy_provider_used);
      if (!plain) return tl::unexpected(plain.error());
      if (*plain && is_key(**plain)) return std::move(**plain);
    }
  }
  return fail(Errc::wrong_key_password,
              "wrong key password: a private key could not be decrypted with it");
}

Result<Bundle> Walker::run(Bytes pfx) {
  if (pfx.empty()) return fail(Errc::malformed_input, "not a PKCS#12 file: the input is empty");
  if (pfx.size() > kMaxInputSize) {
    return fail(Errc::limit_exceeded, "input of " + std::to_string(pfx.size()) +
                                          " bytes is larger than any real PKCS#12 file (limit " +
                                          std::to_string(kMaxInputSize) + ")");
  }
  if (looks_like_pem(pfx)) {
    return fail(Errc::malformed_input,
                "this looks like a PEM file, not PKCS#12 (a .p12/.pfx file is binary DER)");
  }
  std::size_t trailing = 0;
  GETCERT_TRY_ASSIGN(auto top, parse_single(pfx, "PFX", &trailing));
  if (!top.is_universal(kTagSequence)) {
    return fail(Errc::malformed_input, "not a PKCS#12 file: no PFX SEQUENCE at the start");
  }
  if (trailing > 0) warn(std::to_string(trailing) + " trailing bytes after the PFX ignored");
  GETCERT_TRY_ASSIGN(auto r, children(top, "PFX"));

  GETCERT_TRY_ASSIGN(auto version_el, r.expect(kTagInteger, "PFX version"));
  GETCERT_TRY_ASSIGN(auto version, small_uint(version_el, "PFX version"));
  if (version != 3) {
    return fail(Errc::malformed_input, "malformed PKCS#12: PFX version " + std::to_string(version) +
                                           " (only version 3 exists)");
  }
  info_.version = 3;

  GETCERT_TRY_ASSIGN(auto auth_safe, r.expect(kTagSequence, "authSafe ContentInfo"));
  GETCERT_TRY_ASSIGN(auto ar, children(auth_safe, "authSafe ContentInfo"));
  GETCERT_TRY_ASSIGN(auto type_el, ar.expect(kTagOid, "authSafe content type"));
  GETCERT_TRY_ASSIGN(auto type, oid(type_el, "authSafe content type"));
  if (type == oids::kSignedData) {
    return fail(Errc::unsupported,
                "public-key integrity mode (authSafe is signedData) is not supported");
  }
  if (type != oids::kData) {
    return fail(Errc::malformed_input,
                "malformed PKCS#12: authSafe content type " + describe_oid(type) + " is not data");
  }
  auto explicit0 = ar.optional(TagClass::context, 0, "authSafe content");
  if (!explicit0) return tl::unexpected(explicit0.error());
  if (!*explicit0) return fail(Errc::malformed_input, "malformed PKCS#12: authSafe has no content");
  GETCERT_TRY_ASSIGN(auto er, children(**explicit0, "authSafe content"));
  GETCERT_TRY_ASSIGN(auto octets_el, er.expect(kTagOctetString, "authSafe content"));
  GETCERT_TRY_ASSIGN(auto auth_bytes, octet_string(octets_el, "authSafe content"));

  auto mac_el = r.optional(TagClass::universal, kTagSequence, "MacData");
  if (!mac_el) return tl::unexpected(mac_el.error());
  if (!r.empty())
    return fail(Errc::malformed_input, "malformed PKCS#12: unexpected data after MacData");

  std::optional<MacData> mac;
  if (*mac_el) {
    GETCERT_TRY_ASSIGN(auto parsed, parse_mac_data(**mac_el, options_.max_iterations));
    mac = std::move(parsed);
  }
  GETCERT_TRY(reserve_visible_work(mac ? &*mac : nullptr, auth_bytes));

  if (mac) {
    info_.mac = mac->info;
    std::size_t variant = 0;
    auto matched = verify_mac(*mac, candidates_, auth_bytes, budget_, variant);
    if (!matched) return tl::unexpected(matched.error());
    if (!*matched) return fail(Errc::wrong_password, "wrong password (MAC check failed)");
    form_ = **matched;
    mac_verified_ = true;
    info_.mac.verified = true;
    const auto& forms = candidates_[*form_];
    const auto& variants = mac->pbmac1 ? forms.raw : forms.bmp;
    if (variants[variant].reinterpreted) {
      warn(
          "the password only verified the MAC in its ISO-8859-1 form (the producer did not "
          "encode it as UTF-8)");
    }
  } else {
    warn("no MAC: integrity unprotected");
  }

  // AuthenticatedSafe ::= SEQUENCE OF ContentInfo
  GETCERT_TRY_ASSIGN(auto safes, parse_single(auth_bytes, "AuthenticatedSafe"));
  if (!safes.is_universal(kTagSequence)) {
    return fail(Errc::malformed_input, "malformed PKCS#12: AuthenticatedSafe is not a SEQUENCE");
  }
  GETCERT_TRY_ASSIGN(auto sr, children(safes, "AuthenticatedSafe"));
  for (std::size_t index = 1; !sr.empty(); ++index) {
    GETCERT_TRY_ASSIGN(auto ci, sr.expect(kTagSequence, "AuthenticatedSafe ContentInfo"));
    GETCERT_TRY(read_safe(ci, index));
  }

  if (form_) info_.password_used = candidates_[*form_].kind;
  info_.work_spent = budget_.spent();
  return assemble(std::move(contents_), std::move(info_), options_.max_signature_checks);
}

// Before the first derivation: the MAC, every encrypted safe and every shrouded key that is not
// inside an encrypted safe, one password guess each, must fit into the budget. Keys inside
// encrypted safes are reserved once their safe is decrypted (read_safe).
Result<void> Walker::reserve_visible_work(const MacData* mac, Bytes auth_safe) {
  VisibleWork work;
  if (mac != nullptr) {
    work.mac = true;
    work.cost = attempt_cost(*mac);
  }
  auto scanned = [&]() -> Result<void> {
    GETCERT_TRY_ASSIGN(auto safes, parse_single(auth_safe, "AuthenticatedSafe"));
    GETCERT_TRY_ASSIGN(auto sr, children(safes, "AuthenticatedSafe"));
    for (std::size_t index = 1; !sr.empty(); ++index) {
      GETCERT_TRY_ASSIGN(auto ci, sr.expect(kTagSequence, "AuthenticatedSafe ContentInfo"));
      GETCERT_TRY_ASSIGN(auto r, children(ci, "ContentInfo"));
      GETCERT_TRY_ASSIGN(auto type_el, r.expect(kTagOid, "ContentInfo content type"));
      GETCERT_TRY_ASSIGN(auto type, oid(type_el, "ContentInfo content type"));
      auto content = r.optional(TagClass::context, 0, "ContentInfo content");
      if (!content) return tl::unexpected(content.error());
      if (!*content) continue;
      if (type == oids::kData) {
        GETCERT_TRY_ASSIGN(auto octets, data_content(**content));
        auto ok = scan_shrouded_keys(octets, 0, options_.max_iterations, work);
        if (!ok) return ok;
      } else if (type == oids::kEncryptedData) {
        auto safe =
            encrypted_content(**content, options_.max_iterations, "safe " + std::to_string(index));
        if (!safe) return tl::unexpected(safe.error());
        if (safe->ciphertext) {
          work.cost = add_cost(work.cost, attempt_cost(safe->alg));
          ++work.safes;
        }
      }
    }
    return {};
  }();
  auto limit = keep_limit_errors(scanned);
  if (!limit) return limit;
  if (work.cost == 0) return {};
  return budget_.reserve(work.cost, work.describe());
}

Result<void> Walker::read_safe(const Element& content_info, std::size_t index) {
  const std::string where = "safe " + std::to_string(index);
  SafeInfo safe;
  GETCERT_TRY_ASSIGN(auto r, children(content_info, "ContentInfo"));
  GETCERT_TRY_ASSIGN(auto type_el, r.expect(kTagOid, "ContentInfo content type"));
  GETCERT_TRY_ASSIGN(auto type, oid(type_el, "ContentInfo content type"));
  safe.content_type = content_type_name(type);
  auto content = r.optional(TagClass::context, 0, "ContentInfo content");
  if (!content) return tl::unexpected(content.error());

  if (type == oids::kData) {
    safe.encryption = "none";
    if (!*content)
      return fail(Errc::malformed_input, "malformed PKCS#12: " + where + " has no content");
    GETCERT_TRY_ASSIGN(auto octets, data_content(**content));
    auto ok = read_safe_contents(octets, 0, safe);
    if (!ok) return ok;
  } else if (type == oids::kEncryptedData) {
    if (!*content)
      return fail(Errc::malformed_input, "malformed PKCS#12: " + where + " has no content");
    auto encrypted = encrypted_content(**content, options_.max_iterations, where);
    if (!encrypted) return tl::unexpected(encrypted.error());
    safe.encryption = encrypted->alg.description;
    safe.iterations = encrypted->alg.iterations;
    if (!encrypted->ciphertext) {
      warn(where + " (encryptedData) has no encrypted content");
    } else {
      auto plain = decrypt_any(encrypted->alg, *encrypted->ciphertext, "encrypted " + where,
                               [](const SecureBytes& p) {
                                 auto e = parse_single(p, "SafeContents");
                                 return e.has_value() && e->is_universal(kTagSequence);
                               });
      if (!plain) return tl::unexpected(plain.error());
      // The keys inside were invisible until now: reserve them before decrypting any.
      VisibleWork keys;
      auto limit = keep_limit_errors(scan_shrouded_keys(*plain, 0, options_.max_iterations, keys));
      if (!limit) return limit;
      if (keys.cost > 0) {
        auto reserved = budget_.reserve(keys.cost, keys.describe() + " in " + where);
        if (!reserved) return reserved;
      }
      auto ok = read_safe_contents(*plain, 0, safe);
      if (!ok) return ok;
    }
  } else if (type == oids::kEnvelopedData) {
    safe.encryption = "public-key (envelopedData)";
    warn(where + " is envelopedData (public-key encrypted); not supported, skipped");
  } else {
    safe.encryption = "unknown";
    warn(where + " has content type " + describe_oid(type) + "; skipped");
  }
  info_.safes.push_back(std::move(safe));
  return {};
}

Result<void> Walker::read_safe_contents(Bytes data, int nesting, SafeInfo& safe) {
  GETCERT_TRY_ASSIGN(auto r, safe_bags(data));
  while (!r.empty()) {
    GETCERT_TRY_ASSIGN(auto bag, r.expect(kTagSequence, "SafeBag"));
    auto ok = read_bag(bag, nesting, safe);
    if (!ok) return ok;
  }
  return {};
}

Result<void> Walker::read_bag(const Element& bag, int nesting, SafeInfo& safe) {
  // SafeBag ::= SEQUENCE { bagId OID, bagValue [0] EXPLICIT ANY, bagAttributes SET OPTIONAL }
  GETCERT_TRY_ASSIGN(auto r, children(bag, "SafeBag"));
  GETCERT_TRY_ASSIGN(auto id, read_type(r, "SafeBag"));
  GETCERT_TRY_ASSIGN(auto value, safe_bag_value(r));
  BagAttributes attrs;
  auto attr_set = r.optional(TagClass::universal, kTagSet, "bag attributes");
  if (!attr_set) return tl::unexpected(attr_set.error());
  if (*attr_set) {
    GETCERT_TRY_ASSIGN(auto parsed, parse_bag_attributes(**attr_set));
    attrs = std::move(parsed);
  }

  BagInfo info;
  info.type = bag_type_name(id);
  info.attributes = attrs;
  info.nesting = nesting;

  if (id == oids::kKeyBag) {
    GETCERT_TRY_ASSIGN(auto key, parse_pkcs8(value.encoding));
    info.description = describe_key(key.info);
    contents_.keys.push_back({std::move(key), std::move(attrs)});
  } else if (id == oids::kShroudedKeyBag) {
    // EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm AlgId, encryptedData OCTET STRING
    // }
    GETCERT_TRY_ASSIGN(auto er, children(value, "EncryptedPrivateKeyInfo"));
    GETCERT_TRY_ASSIGN(auto alg_el, er.expect(kTagSequence, "shrouded key algorithm"));
    GETCERT_TRY_ASSIGN(auto alg, parse_pbe(alg_el, options_.max_iterations, "a shrouded key bag"));
    info.encryption = alg.description;
    info.iterations = alg.iterations;
    GETCERT_TRY_ASSIGN(auto data_el, er.expect(kTagOctetString, "shrouded key data"));
    GETCERT_TRY_ASSIGN(auto ciphertext, octet_string(data_el, "shrouded key data"));
    GETCERT_TRY_ASSIGN(auto plain, decrypt_key_bag(alg, ciphertext));
    GETCERT_TRY_ASSIGN(auto key, parse_pkcs8(plain));
    info.description = describe_key(key.info);
    contents_.keys.push_back({std::move(key), std::move(attrs)});
  } else if (id == oids::kCertBag) {
    auto ok = read_cert_bag(value, info, attrs);
    if (!ok) return ok;
  } else if (id == oids::kCrlBag) {
    info.description = "CRL (ignored)";
    warn("CRL bag ignored");
  } else if (id == oids::kSecretBag) {
    std::string secret_type = "unknown type";
    if (auto sr = children(value, "SecretBag")) {
      if (auto t = sr->next("SecretBag type"); t && t->is_universal(kTagOid)) {
        if (auto o = oid(*t, "SecretBag type")) secret_type = describe_oid(*o);
      }
    }
    info.description = "secret (" + secret_type + ", ignored)";
    warn("secret bag ignored (" + secret_type + ")");
  } else if (id == oids::kSafeContentsBag) {
    if (nesting + 1 > kMaxSafeContentsNesting) {
      return fail(Errc::malformed_input, "malformed PKCS#12: SafeContents bags nested more than " +
                                             std::to_string(kMaxSafeContentsNesting) +
                                             " levels deep");
    }
    info.description = "nested SafeContents";
    safe.bags.push_back(std::move(info));
    return read_safe_contents(value.encoding, nesting + 1, safe);
  } else {
    info.description = "unknown bag type (ignored)";
    warn("unknown bag type " + describe_oid(id) + " ignored");
  }
  safe.bags.push_back(std::move(info));
  return {};
}

Result<void> Walker::read_cert_bag(const Element& value, BagInfo& info,
                                   const BagAttributes& attrs) {
  // CertBag ::= SEQUENCE { certId OID, certValue [0] EXPLICIT ANY }
  GETCERT_TRY_ASSIGN(auto r, children(value, "CertBag"));
  GETCERT_TRY_ASSIGN(auto type, read_type(r, "CertBag"));
  GETCERT_TRY_ASSIGN(auto wrapper, read_explicit(r, "CertBag"));
  if (type == oids::kSdsiCertificate) {
    info.description = "sdsiCertificate (unsupported, skipped)";
    warn("SDSI certificate bag skipped (unsupported certificate type)");
    return {};
  }
  if (type != oids::kX509Certificate) {
    info.description = "certificate of type " + describe_oid(type) + " (unsupported, skipped)";
    warn("certificate bag of type " + describe_oid(type) + " skipped");
    return {};
  }
  GETCERT_TRY_ASSIGN(auto wr, children(wrapper, "CertBag value"));
  GETCERT_TRY_ASSIGN(auto octets_el, wr.expect(kTagOctetString, "x509Certificate"));
  GETCERT_TRY_ASSIGN(auto der, octet_string(octets_el, "x509Certificate"));
  internal::X509Ptr x509;
  auto cert = internal::certificate_from_der(der, &x509);
  if (!cert) {
    // One unreadable certificate should not hide the rest of a trust store.
    info.description = "x509Certificate (unparseable, skipped)";
    warn("a certificate could not be parsed and was skipped: " + cert.error().message);
    return {};
  }
  info.description = "x509Certificate " + cert->subject;
  info.certificate_sha256 = cert->sha256;
  contents_.certs.push_back({std::move(*cert), std::move(x509), attrs});
  return {};
}

}  // namespace
}  // namespace detail

Result<Bundle> decode(const std::vector<std::uint8_t>& pfx, const DecodeOptions& options) {
  detail::Walker walker(options);
  return walker.run(detail::Bytes(pfx.data(), pfx.size()));
}

std::string_view to_string(PasswordKind kind) noexcept {
  switch (kind) {
    case PasswordKind::unused:
      return "unused";
    case PasswordKind::given:
      return "given";
    case PasswordKind::empty:
      return "empty";
    case PasswordKind::absent:
      return "absent";
  }
  return "unused";
}

}  // namespace getcert::pkcs12
