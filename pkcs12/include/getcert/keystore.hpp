#pragma once

// Key stores in every form they arrive in: DER PKCS#12, base64 text of it (CI secrets, Azure Key
// Vault, Kubernetes Secrets), PEM-armoured PKCS#12, and Java's JKS and JCEKS, recognised by
// content (never by file name) and returned in the same Bundle model decode() produces.
// Public header: C++17, no OpenSSL types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/error.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12 {

enum class KeystoreFormat {
  pkcs12,         // DER/BER PFX
  pkcs12_base64,  // base64 text of a DER PFX
  pkcs12_pem,     // "-----BEGIN PKCS12-----" armour (possibly itself inside base64)
  jks,            // Sun JKS, magic FEEDFEED
  jceks,          // SunJCE JCEKS, magic CECECECE
};

// "pkcs12", "pkcs12-base64", "pkcs12-pem", "jks", "jceks": the names the reports use.
std::string_view to_string(KeystoreFormat format) noexcept;

// The kind of a JKS/JCEKS entry.
enum class KeystoreEntryType {
  private_key,          // a key with its certificate chain
  trusted_certificate,  // one certificate
  secret_key,           // JCEKS: a symmetric key (listed, never exported)
};

// "PrivateKeyEntry", "trustedCertEntry", "SecretKeyEntry": keytool's names, which the reports use.
std::string_view to_string(KeystoreEntryType type) noexcept;

// Caps for Java key stores, checked before anything is allocated for what they count. Real stores
// hold a few keys or a few hundred trusted certificates (Debian's cacerts: about 150).
inline constexpr std::uint32_t kMaxKeystoreEntries = 100'000;
inline constexpr std::uint32_t kMaxKeystoreChainLength = 64;
// Java's serialization of a JCEKS secret-key entry is walked to find its end; real ones nest
// three or four levels.
inline constexpr int kMaxJavaSerializationDepth = 16;

struct KeystoreOptions {
  // The store password (PKCS#12: the file password) as UTF-8; nullopt = none given.
  std::optional<Password> password;
  // JKS/JCEKS: the key entries' password; nullopt = the store password, as keytool does.
  // PKCS#12: the password of the shrouded key bags; the MAC and certificate safes keep using
  // `password`.
  std::optional<Password> key_password;
  std::uint64_t max_iterations = kDefaultMaxIterations;
  std::uint64_t max_signature_checks = kDefaultMaxSignatureChecks;  // as in DecodeOptions
  // JKS/JCEKS without a password (and not protected by the empty one): true lists the entries
  // and certificates with a warning that integrity was not checked, and decrypts no key (what
  // `keytool -list` does); false fails with wrong_password.
  bool list_without_password = false;
};

// One JKS/JCEKS entry as the store lists it.
struct KeystoreEntry {
  std::string alias;  // UTF-8; bytes that are not become `\xNN` (see valid_utf8)
  KeystoreEntryType type = KeystoreEntryType::private_key;
  std::int64_t created = 0;      // seconds since the epoch (the store keeps milliseconds)
  std::size_t certificates = 0;  // chain length of a key entry, 1 for a trusted entry
  std::string protection;        // key entries: "JKS SHA-1 keystream" or
                                 // "PBEWithMD5AndTripleDES, N iterations"; else ""
  bool key_decrypted = false;    // PrivateKeyEntry: its key is in bundle.identities
};

struct Keystore {
  KeystoreFormat format = KeystoreFormat::pkcs12;
  bool base64_wrapped = false;  // the format above arrived as base64 text
  // Identities and certificates. Identity::alias / Bundle::extra_cert_aliases carry the JKS
  // alias, or a PKCS#12 bag's friendlyName (nullopt when it has none).
  Bundle bundle;
  int version = 0;                     // JKS/JCEKS format version (1 or 2); 0 for PKCS#12
  bool integrity_checked = false;      // the JKS digest or the PKCS#12 MAC verified
  std::vector<KeystoreEntry> entries;  // JKS/JCEKS entries in file order; empty for PKCS#12
};

// Detects the format and reads the store. Errors are those of decode() plus, for JKS/JCEKS:
//   malformed_input  truncated, trailing bytes, a count or length beyond the data or the caps
//                    above, an unknown entry tag, a key or certificate that does not parse; a
//                    malformed store fails this way even when the password is also wrong;
//   wrong_password   the store's integrity digest does not match the password ("wrong store
//                    password");
//   wrong_key_password  a key entry does not decrypt with the key password (the store password
//                    was right);
//   unsupported      a key protection algorithm other than JKS's and JCEKS's;
//   limit_exceeded   a JCEKS iteration count above max_iterations.
// Not a key store at all (plain PEM certificates, say) is malformed_input.
Result<Keystore> read_keystore(const std::vector<std::uint8_t>& bytes,
                               const KeystoreOptions& options = {});

// When `bytes` are base64 text (standard or URL-safe alphabet, with or without padding, line
// breaks and surrounding whitespace), the bytes it encodes; otherwise nullopt. PEM files are not
// base64 text (their armour lines are not part of the alphabet).
std::optional<std::vector<std::uint8_t>> decode_base64_text(const std::vector<std::uint8_t>& bytes);

}  // namespace getcert::pkcs12
