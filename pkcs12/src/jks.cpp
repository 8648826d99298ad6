// JKS and JCEKS, from their published descriptions:
// - the store: magic, version (1: no certificate type strings, 2: with them), entry count, then
//   per entry a tag (1 private key, 2 trusted certificate, 3 JCEKS secret key), the alias in
//   Java's modified UTF-8, the creation time in milliseconds, and the entry's data; last, a SHA-1
//   digest over the password as UTF-16BE, the ASCII bytes "Mighty Aphrodite" and everything
//   before the digest;
// - JKS key protection (sun.security.provider.KeyProtector): 20 bytes of salt, the PKCS#8 key
//   XORed with the chained keystream SHA1(password || salt), SHA1(password || previous), ...,
//   and SHA1(password || key) as a check;
// - JCEKS key protection (PBEWithMD5AndTripleDES): per half of the 8-byte salt, MD5 iterated
//   over (half || ASCII password) gives 16 bytes; the 32 bytes are a 3DES key and an IV.

#include "jks.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include "assemble.hpp"
#include "crypto.hpp"
#include "getcert/text.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "java_serialization.hpp"
#include "private_key.hpp"

namespace getcert::pkcs12::detail {
namespace {

constexpr std::size_t kDigestSize = 20;  // SHA-1
constexpr std::string_view kWhitener = "Mighty Aphrodite";
constexpr std::string_view kJksKeyProtectionOid = "1.3.6.1.4.1.42.2.17.1.1";
constexpr std::string_view kJceksKeyProtectionOid = "1.3.6.1.4.1.42.2.19.1";
// The smallest entry: tag, empty alias, date, and a 4-byte length (trusted certificate, v1).
constexpr std::size_t kMinEntrySize = 4 + 2 + 8 + 4;

enum : std::uint32_t { kTagPrivateKey = 1, kTagTrustedCert = 2, kTagSecretKey = 3 };

struct RawCert {
  std::string type;  // "X.509" (version 1 stores do not say, and only hold X.509)
  Bytes der;
};

struct ProtectedKey {
  std::string algorithm;  // OID
  Bytes data;             // JKS: salt || ciphertext || check; JCEKS: the ciphertext
  Bytes salt;             // JCEKS only
  std::uint64_t iterations = 0;
};

struct RawEntry {
  std::uint32_t tag = 0;
  std::string alias;
  std::int64_t created_ms = 0;
  ProtectedKey key;            // tag 1
  std::vector<RawCert> certs;  // tag 1: the chain, leaf first; tag 2: the certificate
};

tl::unexpected<Error> malformed(KeystoreFormat format, const std::string& why) {
  return fail(Errc::malformed_input,
              "malformed " + std::string(format == KeystoreFormat::jks ? "JKS" : "JCEKS") +
                  " key store: " + why);
}

// Java's DataInput.readUTF text (modified UTF-8: U+0000 as C0 80, characters beyond the BMP as
// two encoded surrogates) as UTF-8; what is not valid either way becomes \xNN.
std::string alias_text(Bytes raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == 0xC0 && i + 1 < raw.size() && raw[i + 1] == 0x80) {
      out.push_back('\0');
      ++i;
      continue;
    }
    // ED A0..AF xx (high surrogate) followed by ED B0..BF xx (low surrogate).
    if (raw[i] == 0xED && i + 5 < raw.size() && (raw[i + 1] & 0xF0U) == 0xA0 &&
        (raw[i + 2] & 0xC0U) == 0x80 && raw[i + 3] == 0xED && (raw[i + 4] & 0xF0U) == 0xB0 &&
        (raw[i + 5] & 0xC0U) == 0x80) {
      const std::uint32_t high = 0xD000U | ((raw[i + 1] & 0x3FU) << 6U) | (raw[i + 2] & 0x3FU);
      const std::uint32_t low = 0xD000U | ((raw[i + 4] & 0x3FU) << 6U) | (raw[i + 5] & 0x3FU);
      const std::uint32_t cp = 0x10000U + ((high - 0xD800U) << 10U) + (low - 0xDC00U);
      out.push_back(static_cast<char>(0xF0U | (cp >> 18U)));
      out.push_back(static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU)));
      out.push_back(static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU)));
      out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
      i += 5;
      continue;
    }
    out.push_back(static_cast<char>(raw[i]));
  }
  return valid_utf8(out);
}

// Java chars of a UTF-8 password, big-endian, as both JKS digests take them. Bytes that are not
// UTF-8 count as ISO-8859-1 characters.
SecureBytes utf16be(std::string_view password) {
  SecureBytes out;
  auto unit = [&](std::uint32_t u) {
    out.push_back(static_cast<std::uint8_t>(u >> 8U));
    out.push_back(static_cast<std::uint8_t>(u));
  };
  std::size_t i = 0;
  while (i < password.size()) {
    const auto b = static_cast<std::uint8_t>(password[i]);
    std::size_t len = 1;
    std::uint32_t cp = b;
    if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      cp = b & 0x07U;
    } else if (b >= 0xE0) {
      len = 3;
      cp = b & 0x0FU;
    } else if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
      cp = b & 0x1FU;
    }
    bool ok = len > 1 && i + len <= password.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<std::uint8_t>(password[i + k]);
      ok = (c & 0xC0U) == 0x80;
      cp = (cp << 6U) | (c & 0x3FU);
    }
    if (!ok) {
      unit(b);
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      unit(0xD800U + ((cp - 0x10000U) >> 10U));
      unit(0xDC00U + ((cp - 0x10000U) & 0x3FFU));
    } else {
      unit(cp);
    }
    i += len;
  }
  return out;
}

class StoreReader {
 public:
  StoreReader(Bytes data, KeystoreFormat format) : data_(data), format_(format) {}

  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  std::size_t position() const noexcept { return pos_; }

  Result<Bytes> take(std::size_t n, const char* what) {
    if (n > remaining()) return malformed(format_, std::string("truncated ") + what);
    const Bytes out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  Result<std::uint64_t> number(std::size_t width, const char* what) {
    GETCERT_TRY_ASSIGN(auto b, take(width, what));
    std::uint64_t v = 0;
    for (const std::uint8_t byte : b) v = (v << 8U) | byte;
    return v;
  }

  // A u32 length of something that must follow in the data: checked before it is used.
  Result<std::size_t> length(const char* what) {
    GETCERT_TRY_ASSIGN(auto n, number(4, what));
    if (n > remaining()) {
      return malformed(format_, std::string(what) + " length " + std::to_string(n) +
                                    " is beyond the end of the file");
    }
    return static_cast<std::size_t>(n);
  }

  Result<Bytes> utf(const char* what) {
    GETCERT_TRY_ASSIGN(auto n, number(2, what));
    return take(static_cast<std::size_t>(n), what);
  }

  Result<Bytes> rest_from(std::size_t start) const { return data_.subspan(start); }
  void skip(std::size_t n) { pos_ += n; }

 private:
  Bytes data_;
  std::size_t pos_ = 0;
  KeystoreFormat format_;
};

Result<RawCert> read_cert(StoreReader& in, std::uint32_t version) {
  RawCert cert{"X.509", {}};
  if (version == 2) {
    GETCERT_TRY_ASSIGN(auto type, in.utf("certificate type"));
    cert.type.assign(type.begin(), type.end());
  }
  GETCERT_TRY_ASSIGN(auto len, in.length("certificate"));
  GETCERT_TRY_ASSIGN(auto der, in.take(len, "certificate"));
  cert.der = der;
  return cert;
}

// EncryptedPrivateKeyInfo: the protection algorithm, its parameters and the protected key.
Result<ProtectedKey> parse_protected_key(Bytes der, KeystoreFormat format, const std::string& alias,
                                         const KeystoreOptions& options) {
  const std::string where = "the key of entry " + quote_untrusted(alias);
  auto bad = [&](const std::string& why) { return malformed(format, where + " " + why); };
  auto top = parse_single(der, "key");
  if (!top || !top->is_universal(kTagSequence)) return bad("is not an EncryptedPrivateKeyInfo");
  auto fields = children(*top, "key");
  if (!fields) return bad("is not an EncryptedPrivateKeyInfo");
  auto alg = fields->expect(kTagSequence, "key algorithm");
  if (!alg) return bad("has no algorithm");
  auto alg_fields = children(*alg, "key algorithm");
  if (!alg_fields) return bad("has no algorithm");
  auto oid_el = alg_fields->expect(kTagOid, "key algorithm");
  auto oid_text =
      oid_el ? oid(*oid_el, "key algorithm") : Result<std::string>(tl::unexpected(oid_el.error()));
  if (!oid_text) return bad("has no algorithm");
  ProtectedKey key;
  key.algorithm = *oid_text;
  auto data_el = fields->expect(kTagOctetString, "key data");
  if (!data_el || data_el->constructed) return bad("has no key data");
  key.data = data_el->content;
  if (key.algorithm == kJksKeyProtectionOid) {
    if (key.data.size() < 2 * kDigestSize) return bad("is shorter than its salt and check");
    return key;
  }
  if (key.algorithm != kJceksKeyProtectionOid) {
    return fail(Errc::unsupported, where + " is protected with " + key.algorithm +
                                       ", which getcert does not implement");
  }
  auto params = alg_fields->expect(kTagSequence, "PBE parameters");
  if (!params) return bad("has no PBE parameters");
  auto param_fields = children(*params, "PBE parameters");
  if (!param_fields) return bad("has no PBE parameters");
  auto salt = param_fields->expect(kTagOctetString, "PBE salt");
  auto iterations = param_fields->expect(kTagInteger, "PBE iterations");
  if (!salt || salt->constructed || salt->content.size() != 8 || !iterations) {
    return bad("has invalid PBE parameters");
  }
  auto count = small_uint(*iterations, "PBE iterations");
  if (!count || *count == 0) return bad("has an invalid iteration count");
  if (*count > options.max_iterations) {
    return fail(Errc::limit_exceeded,
                where + " uses " + std::to_string(*count) + " iterations, more than the limit of " +
                    std::to_string(options.max_iterations) +
                    " (raise DecodeOptions::max_iterations if the file is trusted)");
  }
  key.salt = salt->content;
  key.iterations = *count;
  return key;
}

Result<std::vector<RawEntry>> read_entries(StoreReader& in, KeystoreFormat format,
                                           std::uint32_t version, const KeystoreOptions& options) {
  GETCERT_TRY_ASSIGN(auto count, in.number(4, "entry count"));
  // Both caps are checked before anything is reserved: a 40-byte file cannot hold 4 billion
  // entries.
  if (count > kMaxKeystoreEntries || count > (in.remaining() / kMinEntrySize)) {
    return malformed(format,
                     "entry count " + std::to_string(count) + " is more than the file can hold");
  }
  std::vector<RawEntry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  std::set<std::string> aliases;
  for (std::uint64_t n = 0; n < count; ++n) {
    RawEntry e;
    GETCERT_TRY_ASSIGN(auto tag, in.number(4, "entry"));
    e.tag = static_cast<std::uint32_t>(tag);
    GETCERT_TRY_ASSIGN(auto alias, in.utf("alias"));
    e.alias = alias_text(alias);
    GETCERT_TRY_ASSIGN(auto created, in.number(8, "entry date"));
    e.created_ms = static_cast<std::int64_t>(created);
    if (e.tag == kTagPrivateKey) {
      GETCERT_TRY_ASSIGN(auto len, in.length("private key"));
      GETCERT_TRY_ASSIGN(auto key, in.take(len, "private key"));
      GETCERT_TRY_ASSIGN(auto parsed, parse_protected_key(key, format, e.alias, options));
      e.key = parsed;
      GETCERT_TRY_ASSIGN(auto chain, in.number(4, "certificate chain"));
      if (chain > kMaxKeystoreChainLength || chain > in.remaining() / 4) {
        return malformed(format, "certificate chain length " + std::to_string(chain) +
                                     " is more than the file can hold");
      }
      for (std::uint64_t c = 0; c < chain; ++c) {
        GETCERT_TRY_ASSIGN(auto cert, read_cert(in, version));
        e.certs.push_back(cert);
      }
    } else if (e.tag == kTagTrustedCert) {
      GETCERT_TRY_ASSIGN(auto cert, read_cert(in, version));
      e.certs.push_back(cert);
    } else if (e.tag == kTagSecretKey && format == KeystoreFormat::jceks) {
      auto rest = in.rest_from(in.position());
      auto len = java_serialized_length(*rest);
      if (!len) {
        Error err = len.error();
        err.message = "entry " + quote_untrusted(e.alias) + ": " + err.message;
        return tl::unexpected(err);
      }
      in.skip(*len);
    } else {
      return malformed(format, "unknown entry type " + std::to_string(e.tag));
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

Result<std::vector<std::uint8_t>> sha1_of(std::initializer_list<Bytes> parts) {
  GETCERT_TRY_ASSIGN(auto md, fetch_digest("SHA1", "SHA-1"));
  internal::clear_errors();
  internal::EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  std::vector<std::uint8_t> out(kDigestSize);
  bool ok = ctx && EVP_DigestInit_ex2(ctx.get(), md.get(), nullptr) == 1;
  for (const Bytes part : parts) {
    ok = ok && EVP_DigestUpdate(ctx.get(), part.data(), part.size()) == 1;
  }
  ok = ok && EVP_DigestFinal_ex(ctx.get(), out.data(), nullptr) == 1;
  if (!ok) return fail(Errc::internal, "SHA-1 failed", internal::drain_errors());
  return out;
}

Result<bool> digest_matches(Bytes body, Bytes stored, const SecureBytes& password) {
  GETCERT_TRY_ASSIGN(
      auto digest,
      sha1_of({password,
               Bytes(reinterpret_cast<const std::uint8_t*>(kWhitener.data()), kWhitener.size()),
               body}));
  return equal_constant_time(digest, stored);
}

// nullopt: the check digest does not match (wrong key password).
Result<std::optional<SecureBytes>> jks_unprotect(const ProtectedKey& key,
                                                 const SecureBytes& password) {
  const Bytes salt = key.data.first(kDigestSize);
  const Bytes encrypted = key.data.subspan(kDigestSize, key.data.size() - 2 * kDigestSize);
  const Bytes check = key.data.last(kDigestSize);
  SecureBytes plain(encrypted.size());
  std::vector<std::uint8_t> stream(salt.begin(), salt.end());
  for (std::size_t i = 0; i < encrypted.size(); ++i) {
    if (i % kDigestSize == 0) {
      GETCERT_TRY_ASSIGN(auto next, sha1_of({password, stream}));
      stream = std::move(next);
    }
    plain[i] = encrypted[i] ^ stream[i % kDigestSize];
  }
  secure_wipe(stream.data(), stream.size());
  GETCERT_TRY_ASSIGN(auto expected, sha1_of({password, plain}));
  if (!equal_constant_time(expected, check)) return std::optional<SecureBytes>{};
  return std::optional<SecureBytes>(std::move(plain));
}

// nullopt: the key does not decrypt (wrong key password).
Result<std::optional<SecureBytes>> jceks_unprotect(const ProtectedKey& key,
                                                   std::string_view password) {
  // SunJCE's PBEKey refuses passwords that are not printable ASCII, so no such key exists.
  for (const char c : password) {
    if (c < 0x20 || c > 0x7E) return std::optional<SecureBytes>{};
  }
  GETCERT_TRY_ASSIGN(auto md5, fetch_digest("MD5", "MD5"));
  std::array<std::uint8_t, 8> salt{};
  std::copy(key.salt.begin(), key.salt.end(), salt.begin());
  // Equal halves: SunJCE means to reverse the first half but, by a long-standing slip in its
  // loop, turns [a b c d] into [d a b d]; stores made that way need the same transformation.
  if (std::equal(salt.begin(), salt.begin() + 4, salt.begin() + 4)) {
    for (std::size_t i = 0; i < 2; ++i) {
      const std::uint8_t tmp = salt[i];
      salt[i] = salt[3 - i];
      salt[2] = tmp;
    }
  }
  internal::clear_errors();
  internal::EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return fail(Errc::internal, "MD5 failed", internal::drain_errors());
  SecureBytes derived;
  for (std::size_t half = 0; half < 2; ++half) {
    SecureBytes block(salt.begin() + static_cast<std::ptrdiff_t>(half * 4),
                      salt.begin() + static_cast<std::ptrdiff_t>(half * 4 + 4));
    std::array<std::uint8_t, 16> out{};
    for (std::uint64_t i = 0; i < key.iterations; ++i) {
      if (EVP_DigestInit_ex2(ctx.get(), md5.get(), nullptr) != 1 ||
          EVP_DigestUpdate(ctx.get(), block.data(), block.size()) != 1 ||
          EVP_DigestUpdate(ctx.get(), password.data(), password.size()) != 1 ||
          EVP_DigestFinal_ex(ctx.get(), out.data(), nullptr) != 1) {
        return fail(Errc::internal, "MD5 failed", internal::drain_errors());
      }
      block.assign(out.begin(), out.end());
    }
    secure_wipe(out.data(), out.size());
    derived.insert(derived.end(), block.begin(), block.end());
  }
  bool legacy_used = false;
  GETCERT_TRY_ASSIGN(auto cipher, fetch_cipher("DES-EDE3-CBC", "3DES", legacy_used));
  const Bytes all(derived.data(), derived.size());
  return decrypt(cipher.get(), all.first(24), all.subspan(24, 8), key.data);
}

std::string protection_of(const ProtectedKey& key) {
  if (key.algorithm == kJksKeyProtectionOid) return "JKS SHA-1 keystream";
  return "PBEWithMD5AndTripleDES, " + std::to_string(key.iterations) + " iterations";
}

BagAttributes alias_attributes(const std::string& alias) {
  BagAttributes a;
  a.friendly_name = alias;
  return a;
}

}  // namespace

Result<Keystore> read_java_keystore(Bytes data, KeystoreFormat format,
                                    const KeystoreOptions& options) {
  StoreReader in(data, format);
  GETCERT_TRY(in.number(4, "header"));
  GETCERT_TRY_ASSIGN(auto version, in.number(4, "header"));
  if (version != 1 && version != 2) {
    return malformed(format, "unknown version " + std::to_string(version));
  }
  GETCERT_TRY_ASSIGN(auto entries,
                     read_entries(in, format, static_cast<std::uint32_t>(version), options));
  if (in.remaining() < kDigestSize) return malformed(format, "truncated integrity digest");
  if (in.remaining() > kDigestSize) {
    return malformed(format, std::to_string(in.remaining() - kDigestSize) +
                                 " unexpected bytes after the entries");
  }
  const Bytes body = data.first(in.position());
  const Bytes stored = data.last(kDigestSize);

  // Every certificate is parsed before any password is looked at: a malformed store is
  // reported as malformed even when the password is wrong too.
  Keystore out;
  out.format = format;
  out.version = static_cast<int>(version);
  std::vector<std::vector<Certificate>> certs(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    for (const auto& raw : entries[i].certs) {
      if (raw.type != "X.509") {
        out.bundle.info.warnings.push_back("entry " + quote_untrusted(entries[i].alias) + ": a " +
                                           valid_utf8(raw.type) +
                                           " certificate is not supported; skipped");
        continue;
      }
      auto cert = parse_certificate_der(std::vector<std::uint8_t>(raw.der.begin(), raw.der.end()));
      if (!cert) {
        return malformed(format, "entry " + quote_untrusted(entries[i].alias) +
                                     " holds a certificate that does not parse");
      }
      certs[i].push_back(std::move(*cert));
    }
  }

  // The store password: the given one, else the empty one, else (when allowed) none at all.
  std::optional<SecureBytes> store_password;
  Password store_password_text;
  if (options.password) {
    SecureBytes pw = utf16be(options.password->view());
    GETCERT_TRY_ASSIGN(auto ok, digest_matches(body, stored, pw));
    if (!ok) {
      return fail(Errc::wrong_password,
                  "wrong store password: the key store's integrity digest does not match");
    }
    store_password = std::move(pw);
    store_password_text = *options.password;
  } else {
    GETCERT_TRY_ASSIGN(auto ok, digest_matches(body, stored, {}));
    if (ok) {
      store_password = SecureBytes{};
    } else if (!options.list_without_password) {
      return fail(Errc::wrong_password,
                  "a password is required: the key store's integrity digest does not match the "
                  "empty password");
    }
  }
  out.integrity_checked = store_password.has_value();
  if (!out.integrity_checked) {
    out.bundle.info.warnings.emplace_back(
        "no store password given: integrity NOT checked and no key decrypted");
  }

  Contents contents;
  std::set<std::string> seen;
  bool secret_keys = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RawEntry& raw = entries[i];
    KeystoreEntry entry;
    entry.alias = raw.alias;
    entry.created = raw.created_ms / 1000;
    entry.certificates = certs[i].size();
    if (raw.tag == kTagPrivateKey) {
      entry.type = KeystoreEntryType::private_key;
      entry.protection = protection_of(raw.key);
      if (store_password) {
        const Password& key_password =
            options.key_password ? *options.key_password : store_password_text;
        Result<std::optional<SecureBytes>> plain =
            raw.key.algorithm == kJksKeyProtectionOid
                ? jks_unprotect(raw.key, utf16be(key_password.view()))
                : jceks_unprotect(raw.key, key_password.view());
        if (!plain) return tl::unexpected(plain.error());
        std::optional<Result<ParsedKey>> parsed;
        if (*plain) parsed = parse_pkcs8(Bytes((*plain)->data(), (*plain)->size()));
        if (parsed && !*parsed && raw.key.algorithm == kJksKeyProtectionOid) {
          // The check digest matched, so the password was right and the key itself is bad.
          return malformed(format,
                           "the key of entry " + quote_untrusted(raw.alias) + " is not PKCS#8");
        }
        if (!parsed || !*parsed) {
          // A JCEKS key that passes the padding check by chance is still the wrong password.
          return fail(Errc::wrong_key_password,
                      "wrong key password for key entry " + quote_untrusted(raw.alias) +
                          " (the store password is right" +
                          (options.key_password ? "" : "; its key password differs from it") + ")");
        }
        contents.keys.push_back({std::move(**parsed), alias_attributes(raw.alias)});
        entry.key_decrypted = true;
      }
    } else if (raw.tag == kTagTrustedCert) {
      entry.type = KeystoreEntryType::trusted_certificate;
    } else {
      entry.type = KeystoreEntryType::secret_key;
      secret_keys = true;
    }
    for (auto& cert : certs[i]) {
      // Chains share intermediates and roots; one copy is enough for assembly.
      if (!seen.insert(cert.sha256).second) continue;
      auto x509 = internal::x509_from_certificate(cert);
      if (!x509) return fail(Errc::internal, "cannot load a certificate", internal::drain_errors());
      contents.certs.push_back({std::move(cert), std::move(x509), alias_attributes(raw.alias)});
    }
    out.entries.push_back(std::move(entry));
  }
  if (secret_keys) {
    out.bundle.info.warnings.emplace_back("secret-key entries are listed, never exported");
  }
  Info info = std::move(out.bundle.info);
  GETCERT_TRY_ASSIGN(auto assembled,
                     assemble(std::move(contents), std::move(info), options.max_signature_checks));
  out.bundle = std::move(assembled);
  return out;
}

}  // namespace getcert::pkcs12::detail
