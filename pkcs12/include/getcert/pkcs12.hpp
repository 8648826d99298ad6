#pragma once

// PKCS#12 (.p12/.pfx) decoding into identities (key + leaf + chain) and creation.
// Public header: C++17, no OpenSSL types.
//
// decode() reads files from any producer (OpenSSL 1.x/3.x, Windows certmgr/Azure, Java
// keytool, macOS, NSS, GnuTLS, BouncyCastle, pyca, RFC 9579 PBMAC1) and reports everything it
// saw in `Info`, so a CLI can render PEM output and an `info` report from one call.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "getcert/secret.hpp"

namespace getcert::pkcs12 {

// ---------------------------------------------------------------------------------------------
// Memory that is wiped before it is returned to the heap (getcert/secret.hpp), under the names
// this header has always used.

using getcert::CleansingAllocator;
using getcert::secure_wipe;
using getcert::SecureBytes;
using getcert::SecureString;

// A password: wiped when cleared or destroyed, built implicitly from std::string_view,
// const char* and std::string (so `options.password = "pw"` compiles), never converted back
// to a std::string; read it with view().
using Password = getcert::Secret;
// Other secret text (a private key in PEM) passed in: the same wiping type.
using getcert::Secret;

// ---------------------------------------------------------------------------------------------
// Decoding

// Default work budget for one file, in iterations of key derivation (see
// DecodeOptions::max_iterations). Real producers use 1..600,000 iterations per derivation and a
// handful of derivations; ten million already costs seconds, so a file that needs more is
// treated as a denial-of-service attempt unless the caller raises the budget.
inline constexpr std::uint64_t kDefaultMaxIterations = 10'000'000;

// Default budget of signature checks for pairing keys with certificates and building their
// chains (see DecodeOptions::max_signature_checks). A real file needs one per chain link; a
// file that needs ten thousand is made of look-alike issuers.
inline constexpr std::uint64_t kDefaultMaxSignatureChecks = 10'000;

// Largest input decode() accepts (limit_exceeded above it). Real files are at most a few MiB,
// even trust stores with thousands of certificates.
inline constexpr std::size_t kMaxInputSize = std::size_t{64} * 1024 * 1024;

// Cap on nested SafeContents bags (safeContentsBag inside safeContentsBag ...). Real files nest
// at most once or twice.
inline constexpr int kMaxSafeContentsNesting = 8;

struct DecodeOptions {
  // The password as UTF-8. nullopt or "" means "no password": both the empty password (BMPString
  // 00 00) and the absent/NULL password (zero length) are tried, and Info::password_used says
  // which one the file was made with. A given password that fails as UTF-8 is retried in its
  // ISO-8859-1 / raw-byte interpretation, as some Java and OpenSSL 1.x producers used that.
  std::optional<Password> password;
  // The work budget for the whole file. Each key derivation costs its iteration count times
  // the hash-output blocks it derives (a PBES1 3DES key and IV: 3; PBKDF2-HMAC-SHA1 for an
  // AES-256 key: 2; a MAC: 1), and every derivation is paid for: each MAC attempt, each
  // encrypted safe and shrouded key, for every password form tried. Before any derivation,
  // decode() adds up one attempt for everything it can see (the MAC, the encrypted safes, the
  // shrouded keys outside them) and fails with Errc::limit_exceeded when that alone is over the
  // budget; keys found inside an encrypted safe are added when it is decrypted; and a further
  // attempt that would overrun the budget fails instead of running. So no input costs more than
  // this many iterations, and a single iteration count above it is refused outright.
  std::uint64_t max_iterations = kDefaultMaxIterations;
  // Signature checks allowed while chains are assembled (each certificate's issuer is searched
  // for once, among the certificates with its issuer's name); more is limit_exceeded.
  std::uint64_t max_signature_checks = kDefaultMaxSignatureChecks;
  // The shrouded key bags' password when it differs from the file's (which still protects the
  // MAC and the certificate safes); nullopt = the file's. A key that does not decrypt with it is
  // wrong_key_password.
  std::optional<Password> key_password = std::nullopt;
};

// One bag attribute, kept whether or not getcert understands it.
struct Attribute {
  std::string oid;    // dotted form, e.g. "1.2.840.113549.1.9.20"
  std::string name;   // "friendlyName", "localKeyId", "msCspName", "oracleTrustedKeyUsage",
                      // "microsoft(1.3.6.1.4.1.311.17.2)", or the OID again when unknown
  std::string value;  // printable: strings as UTF-8, OCTET/BIT STRINGs as uppercase hex, OIDs
                      // dotted (with a name if known); several values joined with ", "
};

// Convenience view of the attributes a bag carried.
struct BagAttributes {
  std::string friendly_name;   // UTF-8 (decoded from BMPString), trailing U+0000 removed
  std::string local_key_id;    // uppercase hex of the first localKeyId, empty if none
  std::vector<Attribute> all;  // every attribute in file order, including the two above
};

struct BagInfo {
  std::string type;         // "keyBag", "pkcs8ShroudedKeyBag", "certBag", "crlBag", "secretBag",
                            // "safeContentsBag", or the bag OID when unknown
  std::string description;  // e.g. "x509Certificate CN=example.com", "RSA 2048 private key",
                            // "sdsiCertificate (unsupported, skipped)"
  BagAttributes attributes;
  std::string encryption;          // shrouded key bags: the key's own PBE, else ""
  std::uint64_t iterations = 0;    // iterations of `encryption`, 0 if none
  int nesting = 0;                 // 0 for bags directly in a safe, +1 per safeContentsBag level
  std::string certificate_sha256;  // certBag with an X.509 certificate: Certificate::sha256
};

struct SafeInfo {
  std::string content_type;  // "data", "encryptedData", "envelopedData", or the OID
  std::string encryption;    // "none", "pbeWithSHA1And40BitRC2-CBC",
                             // "PBES2/PBKDF2-HMAC-SHA256/AES-256-CBC", ...
  std::uint64_t iterations = 0;
  std::vector<BagInfo> bags;  // flattened, in file order (nested bags follow their parent)
};

struct MacInfo {
  bool present = false;
  std::string algorithm;  // "SHA-256", "PBMAC1(PBKDF2-HMAC-SHA256, HMAC-SHA256)"
  std::uint64_t iterations = 0;
  std::size_t salt_length = 0;
  bool verified = false;  // true when present and it matched (decode fails otherwise)
};

// Which password the file was actually protected with.
enum class PasswordKind {
  unused,  // nothing in the file needed one (no MAC, nothing encrypted)
  given,   // DecodeOptions::password (possibly in its ISO-8859-1 interpretation, see warnings)
  empty,   // the empty password: BMPString 00 00
  absent,  // the absent / NULL password: zero-length BMPString
};

struct Info {
  int version = 0;  // PFX version, always 3 on success
  MacInfo mac;
  PasswordKind password_used = PasswordKind::unused;
  bool legacy_provider_used = false;   // an RC2/RC4/DES algorithm needed OpenSSL's legacy provider
  std::uint64_t work_spent = 0;        // key derivation work done, counted as for max_iterations
  std::uint64_t signature_checks = 0;  // signature checks of chain assembly (max_signature_checks)
  std::vector<SafeInfo> safes;         // AuthenticatedSafe items in file order
  std::vector<std::string> warnings;   // e.g. "no MAC: integrity unprotected", "CRL bag ignored"
};

// A decrypted private key as PKCS#8 PrivateKeyInfo DER, held in wiped memory. Copies are deep
// and wiped as well.
class PrivateKey {
 public:
  PrivateKey() = default;
  // Takes PKCS#8 DER (as produced by decode); `info` and `attributes` describe it.
  PrivateKey(SecureBytes pkcs8_der, KeyInfo info, BagAttributes attributes);

  // Key type and size ("RSA" 2048, "EC" 256 "P-256", "Ed25519", ...); type is the algorithm OID
  // when OpenSSL cannot load the key (e.g. GOST).
  const KeyInfo& info() const noexcept { return info_; }
  // friendlyName / localKeyId / every other attribute of the key's bag.
  const BagAttributes& attributes() const noexcept { return attributes_; }
  // The PKCS#8 PrivateKeyInfo DER (DER-normalised, key content unchanged). Borrowed.
  const SecureBytes& pkcs8_der() const noexcept { return der_; }

  // "-----BEGIN PRIVATE KEY-----" PEM of pkcs8_der(). The caller owns the returned secret.
  SecureString pem() const;
  // "-----BEGIN ENCRYPTED PRIVATE KEY-----" PEM: PKCS#8 EncryptedPrivateKeyInfo with PBES2,
  // PBKDF2-HMAC-SHA256 (`iterations`, 16-byte random salt) and AES-256-CBC, keyed with the UTF-8
  // bytes of `passphrase` (what `openssl pkey -passin` expects). Fails with invalid_argument for
  // an empty passphrase or iterations < 1000, internal if OpenSSL fails.
  Result<SecureString> encrypted_pem(std::string_view passphrase,
                                     std::uint32_t iterations = 600'000) const;

 private:
  SecureBytes der_;
  KeyInfo info_;
  BagAttributes attributes_;
};

struct Identity {
  PrivateKey key;
  std::optional<Certificate> leaf;  // the certificate whose public key is `key`'s; nullopt if none
  BagAttributes leaf_attributes;    // attributes of the leaf's certBag
  std::vector<Certificate> chain;   // issuers of leaf, nearest first, root last if present
  // Filled by read_keystore() (getcert/keystore.hpp): the JKS/JCEKS alias, or the key bag's
  // friendlyName; nullopt when the store names none. decode() leaves it empty.
  std::optional<std::string> alias = std::nullopt;
};

struct Bundle {
  std::vector<Identity> identities;      // one per private key, in file order
  std::vector<Certificate> extra_certs;  // certificates in no identity's chain (a trust store's
                                         // certificates all end up here), in file order
  std::vector<BagAttributes> extra_cert_attributes;  // parallel to extra_certs
  Info info;
  // Filled by read_keystore() (getcert/keystore.hpp), parallel to extra_certs: a trusted
  // entry's alias or the certBag's friendlyName. decode() leaves it empty.
  std::vector<std::optional<std::string>> extra_cert_aliases{};
};

// Decodes a PFX (DER or BER) and assembles identities:
// - every AuthenticatedSafe item and SafeBag is walked (nested safeContentsBags up to
//   kMaxSafeContentsNesting levels); CRL, secret, SDSI-certificate and unknown bags are reported
//   in Info (with a warning) and skipped;
// - each private key is matched to the certificate carrying its public key (localKeyId only
//   breaks ties); its chain is built by issuer name + signature, whatever the file order.
// Errors:
//   malformed_input  not a PFX (also: a PEM file), truncated, version != 3, nesting too deep,
//                    a PBMAC1 keyLength that is absent or not an HMAC output length (20, 28, 32,
//                    48, 64) at least as long as the MAC's, contents that do not parse;
//   wrong_password   the MAC does not verify (or, without MAC, decryption fails);
//   unsupported      a valid file using an algorithm getcert cannot run (message names the OID),
//                    or a legacy algorithm when OpenSSL's legacy provider cannot be loaded;
//   limit_exceeded   key derivation work above DecodeOptions::max_iterations (the message gives
//                    the computed cost), chain assembly needing more signature checks than
//                    DecodeOptions::max_signature_checks, or an input larger than kMaxInputSize.
// Error messages never contain the password or key material.
Result<Bundle> decode(const std::vector<std::uint8_t>& pfx, const DecodeOptions& options = {});

// Human name of a PasswordKind ("unused", "given", "empty", "absent").
std::string_view to_string(PasswordKind kind) noexcept;

// ---------------------------------------------------------------------------------------------
// Creation

struct CreateOptions {
  Password password;  // UTF-8; "" makes an (insecure) file protected by the empty password
  // false: PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC) for key and certificates, SHA-256 MAC.
  // true: pbeWithSHA1And3-KeyTripleDES-CBC for key and certificates and a SHA-1 MAC, for
  // Windows before Server 2019, Java 8 before 8u301 and macOS Keychain imports.
  bool legacy = false;
  std::string friendly_name;     // set on the key and leaf bags (with a common localKeyId)
  std::uint64_t iterations = 0;  // PBE and MAC iterations; 0 = 10,000 (minimum 2048)
  std::optional<Password> key_passphrase;  // for an encrypted key_pem
};

// Builds a PFX from a private key (PEM: PKCS#8, encrypted PKCS#8 or traditional) and its
// certificates, leaf first, then the chain in any order. `certs` may be empty (key-only file);
// `key_pem` may be empty for a certificate-only file (trust store: every cert is a CA cert).
// Errors: invalid_argument (no key in key_pem, key does not match the leaf, nothing to store,
// iterations beyond INT_MAX), wrong_key_password (an encrypted key without key_passphrase, or
// one that key_passphrase does not open), internal (OpenSSL failure). Returns the DER
// bytes; the caller decides where to write them. Never prompts on a terminal.
Result<std::vector<std::uint8_t>> create(const Secret& key_pem,
                                         const std::vector<Certificate>& certs,
                                         const CreateOptions& options);

}  // namespace getcert::pkcs12
