#pragma once

// The OIDs PKCS#12 files use, with the names getcert reports and the OpenSSL algorithm names
// they map to. One table so that messages, Info and the crypto code agree.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace getcert::pkcs12::detail {

namespace oids {
inline constexpr std::string_view kData = "1.2.840.113549.1.7.1";
inline constexpr std::string_view kSignedData = "1.2.840.113549.1.7.2";
inline constexpr std::string_view kEnvelopedData = "1.2.840.113549.1.7.3";
inline constexpr std::string_view kEncryptedData = "1.2.840.113549.1.7.6";

inline constexpr std::string_view kKeyBag = "1.2.840.113549.1.12.10.1.1";
inline constexpr std::string_view kShroudedKeyBag = "1.2.840.113549.1.12.10.1.2";
inline constexpr std::string_view kCertBag = "1.2.840.113549.1.12.10.1.3";
inline constexpr std::string_view kCrlBag = "1.2.840.113549.1.12.10.1.4";
inline constexpr std::string_view kSecretBag = "1.2.840.113549.1.12.10.1.5";
inline constexpr std::string_view kSafeContentsBag = "1.2.840.113549.1.12.10.1.6";

inline constexpr std::string_view kX509Certificate = "1.2.840.113549.1.9.22.1";
inline constexpr std::string_view kSdsiCertificate = "1.2.840.113549.1.9.22.2";
inline constexpr std::string_view kX509Crl = "1.2.840.113549.1.9.23.1";

inline constexpr std::string_view kFriendlyName = "1.2.840.113549.1.9.20";
inline constexpr std::string_view kLocalKeyId = "1.2.840.113549.1.9.21";

inline constexpr std::string_view kPbes2 = "1.2.840.113549.1.5.13";
inline constexpr std::string_view kPbkdf2 = "1.2.840.113549.1.5.12";
inline constexpr std::string_view kPbmac1 = "1.2.840.113549.1.5.14";
inline constexpr std::string_view kHmacWithSha1 = "1.2.840.113549.2.7";
}  // namespace oids

// A hash usable as MAC digest, PBKDF2 PRF or HMAC.
struct HashAlgorithm {
  std::string_view openssl_name;  // for EVP_MD_fetch
  std::string_view display;       // "SHA-256"
  std::size_t output_size;        // octets; the work budget counts derived blocks of this size
};

// MacData digest OIDs (sha1, sha2 family, md5, ...); nullptr when unknown.
const HashAlgorithm* hash_by_digest_oid(std::string_view oid);
// hmacWithSHA* OIDs (PBKDF2 PRF, PBMAC1 messageAuthScheme); nullptr when unknown.
const HashAlgorithm* hash_by_hmac_oid(std::string_view oid);
// True when `size` is the output size of one of the hmacWithSHA* hashes above.
bool is_hmac_output_size(std::uint64_t size) noexcept;

// How a PBES1 scheme's cipher runs: through OpenSSL, or with the project's own RC2/RC4
// (legacy_ciphers.hpp), which OpenSSL only has in its separately loaded legacy provider.
enum class Pbes1Cipher : std::uint8_t { openssl, rc2_cbc, rc4 };

// The PKCS#12 PBES1 schemes (1.2.840.113549.1.12.1.x), keyed with the PKCS#12 KDF over SHA-1.
struct Pbes1Scheme {
  std::string_view oid;
  std::string_view display;     // "pbeWithSHA1And40BitRC2-CBC"
  std::string_view short_name;  // "RC2-40" for messages about the legacy provider
  std::string_view cipher;      // OpenSSL cipher name (Pbes1Cipher::openssl)
  int key_length;
  int iv_length;
  Pbes1Cipher implementation;
};
const Pbes1Scheme* pbes1_scheme(std::string_view oid);

// PBES2 encryption schemes.
struct Pbes2Cipher {
  std::string_view oid;
  std::string_view display;  // "AES-256-CBC"
  std::string_view cipher;   // OpenSSL cipher name
  int key_length;
  int iv_length;
  bool legacy;
};
const Pbes2Cipher* pbes2_cipher(std::string_view oid);

// Bag type names used in Info ("keyBag", ...); the OID itself when unknown.
std::string bag_type_name(std::string_view oid);
// "data", "encryptedData", ...; the OID itself when unknown.
std::string content_type_name(std::string_view oid);
// Attribute names ("friendlyName", "msCspName", "microsoft(1.3.6...)", ...).
std::string attribute_name(std::string_view oid);
// Any OID as "name (1.2.3)" when OpenSSL or our tables know it, else the dotted OID: for error
// messages about unsupported algorithms.
std::string describe_oid(std::string_view oid);

}  // namespace getcert::pkcs12::detail
