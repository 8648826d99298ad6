#pragma once

// DER builders for hand-crafted PKCS#12 files: the hostile shapes no producer writes (dozens of
// shrouded keys or safes at iteration counts just under the cap, PBMAC1 with a 1024-octet key),
// for the library tests and the CLI tests alike. Header-only so that both test executables can
// use it; nothing here encrypts, so keys and MACs in these files are never valid.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "support/asn1.hpp"

namespace getcert::test::crafted {

// The generic DER builders (tlv, seq, oid, integer, ...) are tests/support/asn1.hpp's.
using namespace getcert::test::asn1;  // NOLINT(google-build-using-namespace)

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
