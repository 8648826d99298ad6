#include "algorithms.hpp"

#include <openssl/objects.h>

#include <algorithm>
#include <array>
#include <string>

#include "internal/ossl.hpp"

namespace getcert::pkcs12::detail {
namespace {

struct OidHash {
  std::string_view oid;
  HashAlgorithm hash;
};

constexpr std::array<OidHash, 8> kDigests{{
    {"1.3.14.3.2.26", {"SHA1", "SHA-1", 20}},
    {"2.16.840.1.101.3.4.2.4", {"SHA224", "SHA-224", 28}},
    {"2.16.840.1.101.3.4.2.1", {"SHA256", "SHA-256", 32}},
    {"2.16.840.1.101.3.4.2.2", {"SHA384", "SHA-384", 48}},
    {"2.16.840.1.101.3.4.2.3", {"SHA512", "SHA-512", 64}},
    {"2.16.840.1.101.3.4.2.5", {"SHA512-224", "SHA-512/224", 28}},
    {"2.16.840.1.101.3.4.2.6", {"SHA512-256", "SHA-512/256", 32}},
    {"1.2.840.113549.2.5", {"MD5", "MD5", 16}},
}};

constexpr std::array<OidHash, 7> kHmacs{{
    {"1.2.840.113549.2.7", {"SHA1", "SHA1", 20}},
    {"1.2.840.113549.2.8", {"SHA224", "SHA224", 28}},
    {"1.2.840.113549.2.9", {"SHA256", "SHA256", 32}},
    {"1.2.840.113549.2.10", {"SHA384", "SHA384", 48}},
    {"1.2.840.113549.2.11", {"SHA512", "SHA512", 64}},
    {"1.2.840.113549.2.12", {"SHA512-224", "SHA512-224", 28}},
    {"1.2.840.113549.2.13", {"SHA512-256", "SHA512-256", 32}},
}};

constexpr std::array<Pbes1Scheme, 6> kPbes1{{
    {"1.2.840.113549.1.12.1.1", "pbeWithSHA1And128BitRC4", "RC4-128", "RC4", 16, 0,
     Pbes1Cipher::rc4},
    {"1.2.840.113549.1.12.1.2", "pbeWithSHA1And40BitRC4", "RC4-40", "RC4-40", 5, 0,
     Pbes1Cipher::rc4},
    {"1.2.840.113549.1.12.1.3", "pbeWithSHA1And3-KeyTripleDES-CBC", "3DES", "DES-EDE3-CBC", 24, 8,
     Pbes1Cipher::openssl},
    {"1.2.840.113549.1.12.1.4", "pbeWithSHA1And2-KeyTripleDES-CBC", "2-key 3DES", "DES-EDE-CBC", 16,
     8, Pbes1Cipher::openssl},
    {"1.2.840.113549.1.12.1.5", "pbeWithSHA1And128BitRC2-CBC", "RC2-128", "RC2-CBC", 16, 8,
     Pbes1Cipher::rc2_cbc},
    {"1.2.840.113549.1.12.1.6", "pbeWithSHA1And40BitRC2-CBC", "RC2-40", "RC2-40-CBC", 5, 8,
     Pbes1Cipher::rc2_cbc},
}};

constexpr std::array<Pbes2Cipher, 8> kPbes2{{
    {"2.16.840.1.101.3.4.1.2", "AES-128-CBC", "AES-128-CBC", 16, 16, false},
    {"2.16.840.1.101.3.4.1.22", "AES-192-CBC", "AES-192-CBC", 24, 16, false},
    {"2.16.840.1.101.3.4.1.42", "AES-256-CBC", "AES-256-CBC", 32, 16, false},
    {"1.2.840.113549.3.7", "DES-EDE3-CBC", "DES-EDE3-CBC", 24, 8, false},
    {"1.3.14.3.2.7", "DES-CBC", "DES-CBC", 8, 8, true},
    {"1.2.392.200011.61.1.1.1.2", "CAMELLIA-128-CBC", "CAMELLIA-128-CBC", 16, 16, false},
    {"1.2.392.200011.61.1.1.1.3", "CAMELLIA-192-CBC", "CAMELLIA-192-CBC", 24, 16, false},
    {"1.2.392.200011.61.1.1.1.4", "CAMELLIA-256-CBC", "CAMELLIA-256-CBC", 32, 16, false},
}};

struct OidName {
  std::string_view oid;
  std::string_view name;
};

constexpr std::array<OidName, 6> kBagTypes{{
    {oids::kKeyBag, "keyBag"},
    {oids::kShroudedKeyBag, "pkcs8ShroudedKeyBag"},
    {oids::kCertBag, "certBag"},
    {oids::kCrlBag, "crlBag"},
    {oids::kSecretBag, "secretBag"},
    {oids::kSafeContentsBag, "safeContentsBag"},
}};

constexpr std::array<OidName, 4> kContentTypes{{
    {oids::kData, "data"},
    {oids::kSignedData, "signedData"},
    {oids::kEnvelopedData, "envelopedData"},
    {oids::kEncryptedData, "encryptedData"},
}};

constexpr std::array<OidName, 7> kAttributes{{
    {oids::kFriendlyName, "friendlyName"},
    {oids::kLocalKeyId, "localKeyId"},
    {"1.3.6.1.4.1.311.17.1", "msCspName"},
    {"1.3.6.1.4.1.311.17.2", "msLocalMachineKeySet"},
    {"1.3.6.1.4.1.311.17.3.20", "msKeyProviderInfo"},
    {"2.5.29.15", "keyUsage"},
    {"2.16.840.1.113894.746875.1.1", "oracleTrustedKeyUsage"},
}};

template <class Table>
auto find(const Table& table, std::string_view oid) -> decltype(&table[0]) {
  for (const auto& row : table) {
    if (row.oid == oid) return &row;
  }
  return nullptr;
}

std::string openssl_name(std::string_view oid) {
  const std::string text(oid);
  internal::Asn1ObjectPtr obj(OBJ_txt2obj(text.c_str(), 1));
  if (!obj) return {};
  const int nid = OBJ_obj2nid(obj.get());
  if (nid == NID_undef) return {};
  const char* ln = OBJ_nid2ln(nid);
  return ln != nullptr ? ln : std::string{};
}

}  // namespace

const HashAlgorithm* hash_by_digest_oid(std::string_view oid) {
  const auto* row = find(kDigests, oid);
  return row != nullptr ? &row->hash : nullptr;
}

const HashAlgorithm* hash_by_hmac_oid(std::string_view oid) {
  const auto* row = find(kHmacs, oid);
  return row != nullptr ? &row->hash : nullptr;
}

bool is_hmac_output_size(std::uint64_t size) noexcept {
  return std::any_of(kHmacs.begin(), kHmacs.end(),
                     [size](const OidHash& row) { return row.hash.output_size == size; });
}

const Pbes1Scheme* pbes1_scheme(std::string_view oid) { return find(kPbes1, oid); }

const Pbes2Cipher* pbes2_cipher(std::string_view oid) { return find(kPbes2, oid); }

std::string bag_type_name(std::string_view oid) {
  const auto* row = find(kBagTypes, oid);
  return std::string(row != nullptr ? row->name : oid);
}

std::string content_type_name(std::string_view oid) {
  const auto* row = find(kContentTypes, oid);
  return std::string(row != nullptr ? row->name : oid);
}

std::string attribute_name(std::string_view oid) {
  if (const auto* row = find(kAttributes, oid)) return std::string(row->name);
  if (oid.rfind("1.3.6.1.4.1.311.", 0) == 0) return "microsoft(" + std::string(oid) + ")";
  if (std::string name = openssl_name(oid); !name.empty()) return name;
  return std::string(oid);
}

std::string describe_oid(std::string_view oid) {
  std::string name;
  if (const auto* s = find(kPbes1, oid)) name = s->display;
  if (const auto* c = find(kPbes2, oid)) name = c->display;
  if (name.empty()) name = openssl_name(oid);
  if (name.empty()) return std::string(oid);
  return name + " (" + std::string(oid) + ")";
}

}  // namespace getcert::pkcs12::detail
