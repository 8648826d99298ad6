#pragma once

// DER builders for hand-crafted PKCS#12 files: the hostile shapes no producer writes (dozens of
// shrouded keys or safes at iteration counts just under the cap, PBMAC1 with a 1024-octet key),
// for the library tests and the CLI tests alike. Header-only so that both test executables can
// use it; nothing here encrypts, so keys and MACs in these files are never valid.

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace getcert::test::crafted {

using Der = std::vector<std::uint8_t>;

// One TLV with a definite length in the shortest form.
inline Der tlv(std::uint8_t tag, const Der& content) {
  Der out{tag};
  const std::size_t n = content.size();
  if (n < 0x80) {
    out.push_back(static_cast<std::uint8_t>(n));
  } else {
    Der len;
    for (std::size_t v = n; v > 0; v >>= 8) len.insert(len.begin(), static_cast<std::uint8_t>(v));
    out.push_back(static_cast<std::uint8_t>(0x80 | len.size()));
    out.insert(out.end(), len.begin(), len.end());
  }
  out.insert(out.end(), content.begin(), content.end());
  return out;
}

inline Der cat(const std::vector<Der>& parts) {
  Der out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline Der seq(const std::vector<Der>& parts) { return tlv(0x30, cat(parts)); }
inline Der octets(const Der& bytes) { return tlv(0x04, bytes); }
inline Der explicit0(const Der& inner) { return tlv(0xA0, inner); }
inline Der null_value() { return {0x05, 0x00}; }

inline Der integer(std::uint64_t v) {
  Der content;
  do {
    content.insert(content.begin(), static_cast<std::uint8_t>(v & 0xFF));
    v >>= 8;
  } while (v > 0);
  if ((content.front() & 0x80) != 0) content.insert(content.begin(), 0x00);
  return tlv(0x02, content);
}

// Dotted OID text to DER.
inline Der oid(std::string_view dotted) {
  std::vector<std::uint64_t> arcs;
  std::stringstream in{std::string(dotted)};
  for (std::string arc; std::getline(in, arc, '.');) arcs.push_back(std::stoull(arc));
  Der content;
  auto base128 = [&content](std::uint64_t v) {
    Der groups{static_cast<std::uint8_t>(v & 0x7F)};
    for (v >>= 7; v > 0; v >>= 7) {
      groups.insert(groups.begin(), static_cast<std::uint8_t>(0x80 | (v & 0x7F)));
    }
    content.insert(content.end(), groups.begin(), groups.end());
  };
  base128(arcs.at(0) * 40 + arcs.at(1));
  for (std::size_t i = 2; i < arcs.size(); ++i) base128(arcs[i]);
  return tlv(0x06, content);
}

inline constexpr std::string_view kHmacSha1 = "1.2.840.113549.2.7";
inline constexpr std::string_view kHmacSha256 = "1.2.840.113549.2.9";
inline constexpr std::string_view kSha1 = "1.3.14.3.2.26";
inline constexpr std::string_view kSha256 = "2.16.840.1.101.3.4.2.1";

// PBES2 / PBKDF2(prf, iterations) / AES-256-CBC: one block per attempt with HMAC-SHA256, two
// with HMAC-SHA1 (32 key octets from 20-octet blocks).
inline Der pbes2_aes256(std::uint64_t iterations, std::string_view prf = kHmacSha256,
                        const Der& salt = Der(8, 0x5A), const Der& iv = Der(16, 0x1F)) {
  const Der kdf = seq({oid("1.2.840.113549.1.5.12"),
                       seq({octets(salt), integer(iterations), seq({oid(prf), null_value()})})});
  const Der cipher = seq({oid("2.16.840.1.101.3.4.1.42"), octets(iv)});
  return seq({oid("1.2.840.113549.1.5.13"), seq({kdf, cipher})});
}

// pbeWithSHA1And3-KeyTripleDES-CBC: three PKCS#12 KDF blocks per attempt (24-octet key, IV).
inline Der pbes1_3des(std::uint64_t iterations) {
  return seq({oid("1.2.840.113549.1.12.1.3"), seq({octets(Der(8, 0x33)), integer(iterations)})});
}

// A pkcs8ShroudedKeyBag whose ciphertext is junk: reading it costs the key derivation.
inline Der shrouded_key_bag(const Der& algorithm) {
  return seq(
      {oid("1.2.840.113549.1.12.10.1.2"), explicit0(seq({algorithm, octets(Der(48, 0xC3))}))});
}

// A certBag holding `der` (any bytes; an unparseable certificate is skipped with a warning).
inline Der cert_bag(const Der& der) {
  return seq({oid("1.2.840.113549.1.12.10.1.3"),
              explicit0(seq({oid("1.2.840.113549.1.9.22.1"), explicit0(octets(der))}))});
}

inline Der safe_contents(const std::vector<Der>& bags) { return seq(bags); }

// ContentInfo data holding SafeContents.
inline Der data_safe(const std::vector<Der>& bags) {
  return seq({oid("1.2.840.113549.1.7.1"), explicit0(octets(safe_contents(bags)))});
}

// ContentInfo encryptedData with `algorithm` over `ciphertext`.
inline Der encrypted_safe(const Der& algorithm, const Der& ciphertext) {
  return seq({oid("1.2.840.113549.1.7.6"),
              explicit0(seq({integer(0), seq({oid("1.2.840.113549.1.7.1"), algorithm,
                                              tlv(0x80, ciphertext)})}))});
}

// Classic MacData (PKCS#12 KDF + HMAC over `digest`); the MAC value is zeros.
inline Der classic_mac(std::uint64_t iterations, std::string_view digest = kSha256,
                       std::size_t digest_size = 32) {
  return seq({seq({seq({oid(digest), null_value()}), octets(Der(digest_size, 0))}),
              octets(Der(8, 0x77)), integer(iterations)});
}

// RFC 9579 PBMAC1 MacData: PBKDF2(prf, iterations, key_length) + HMAC(hmac); MAC value zeros.
inline Der pbmac1_mac(std::uint64_t iterations, std::uint64_t key_length,
                      std::string_view prf = kHmacSha256, std::string_view hmac = kHmacSha256,
                      std::size_t mac_size = 32) {
  const Der kdf = seq(
      {oid("1.2.840.113549.1.5.12"), seq({octets(Der(16, 0x21)), integer(iterations),
                                          integer(key_length), seq({oid(prf), null_value()})})});
  const Der alg = seq({oid("1.2.840.113549.1.5.14"), seq({kdf, seq({oid(hmac), null_value()})})});
  return seq({seq({alg, octets(Der(mac_size, 0))}), octets(Der(8, 0x11)), integer(1)});
}

// PFX v3 over the ContentInfos `safes`, with MacData when given.
inline Der pfx(const std::vector<Der>& safes, const std::optional<Der>& mac = std::nullopt) {
  const Der auth_safe = seq({oid("1.2.840.113549.1.7.1"), explicit0(octets(seq(safes)))});
  std::vector<Der> parts{integer(3), auth_safe};
  if (mac) parts.push_back(*mac);
  return seq(parts);
}

// `count` copies of `item`.
inline std::vector<Der> repeated(const Der& item, std::size_t count) {
  std::vector<Der> out(count, item);  // not braces: those would make a two-element list
  return out;
}

}  // namespace getcert::test::crafted
