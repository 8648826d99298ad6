#pragma once

// The one certificate model that every output (PEM, JSON, text) is rendered from.
// Public header: C++17, no OpenSSL types.

#include <cstdint>
#include <string>
#include <vector>

#include "getcert/error.hpp"

namespace getcert {

struct KeyInfo {
  std::string type;   // "RSA", "EC", "Ed25519", "Ed448", "DSA", ...
  int bits = 0;       // key size in bits (security-relevant size for EC/EdDSA)
  std::string curve;  // "P-256", "P-384", ... for EC keys; empty otherwise
};

struct SubjectAltNames {
  std::vector<std::string> dns;
  std::vector<std::string> ip;
  std::vector<std::string> uri;
  std::vector<std::string> email;
};

// A Signed Certificate Timestamp embedded in the certificate (RFC 6962 section 3.3): a
// Certificate Transparency log's promise to publish it.
struct Sct {
  int version = 0;                  // 0 = v1
  std::string log_id;               // base64 of the log's 32-byte key hash
  std::int64_t timestamp_ms = 0;    // milliseconds since the Unix epoch, UTC
  std::string signature_algorithm;  // e.g. "ecdsa-with-SHA256"
};

struct Certificate {
  std::vector<std::uint8_t> der;  // exact bytes as received or read

  std::string subject;  // RFC 2253 form, e.g. "CN=example.com,O=Example"
  std::string issuer;
  std::string subject_cn;  // first commonName, empty if none
  std::string issuer_cn;
  std::string serial;           // uppercase hex, no separators
  std::int64_t not_before = 0;  // seconds since the Unix epoch, UTC
  std::int64_t not_after = 0;
  SubjectAltNames sans;
  KeyInfo key;
  std::string signature_algorithm;  // e.g. "sha256WithRSAEncryption", "ED25519"
  bool is_ca = false;
  bool self_signed = false;  // subject == issuer and the signature verifies with its own key
  std::vector<std::string> ca_issuers_urls;  // AIA "CA Issuers" URLs
  std::vector<std::string> ocsp_urls;        // AIA OCSP responder URLs
  std::string sha256;                        // hex fingerprint of the DER, uppercase, no separators
  std::string sha1;
  std::string spki_sha256;  // base64 SHA-256 of the SubjectPublicKeyInfo (HPKP-style pin)
  // Uppercase hex SHA-256 of the DER tbsCertificate without its Certificate Transparency
  // extensions (the SCT list 1.3.6.1.4.1.11129.2.4.2 and the precertificate poison
  // 1.3.6.1.4.1.11129.2.4.3): what a CA signed, whatever the signature and the SCTs. The same
  // TBS signed twice, or a precertificate and its certificate, share it (when the CA signs the
  // precertificate itself: one signed by a Precertificate Signing Certificate names another
  // issuer). certspotter keys certificates by it.
  std::string tbs_sha256;
  std::vector<Sct> scts;  // embedded SCTs (precertificate SCT list extension)
  // TLS Feature extension with status_request: clients must insist on a stapled OCSP response.
  bool must_staple = false;

  // PEM text ("-----BEGIN CERTIFICATE-----\n...") of der.
  std::string pem() const;
  // Whole days from `now` until not_after (negative once expired).
  std::int64_t days_left(std::int64_t now) const noexcept;
  // A short label for messages: the subject CN, else the full subject.
  std::string display_name() const;
};

// Parses one DER certificate. Fails with malformed_input.
Result<Certificate> parse_certificate_der(const std::vector<std::uint8_t>& der);

// Reads every certificate in a PEM text (other PEM blocks are skipped).
// Fails with malformed_input when a CERTIFICATE block is corrupt or none is present.
Result<std::vector<Certificate>> parse_certificates_pem(const std::string& pem);

// Reads certificates from any common container: one DER certificate, a certs-only PKCS#7
// (DER or PEM, as .p7b/.p7c files and AIA URLs serve them), or PEM text. Fails with
// malformed_input when none of these parse.
Result<std::vector<Certificate>> parse_certificates(const std::vector<std::uint8_t>& bytes);

// PEM text for a sequence of certificates, in order.
std::string to_pem(const std::vector<Certificate>& chain);

// The certificates of `issuers` that are not self-signed roots, in order: what a peer sends
// after its leaf (the other side holds its trust anchor already, or must not take it from the
// peer), and what chain.pem holds.
std::vector<Certificate> intermediates_only(const std::vector<Certificate>& issuers);

// `leaf`, then intermediates_only(issuers): the "fullchain" a server or a client presents.
std::vector<Certificate> leaf_plus_intermediates(const Certificate& leaf,
                                                 const std::vector<Certificate>& issuers);

// Formats seconds since the epoch as "2026-01-31T12:00:00Z".
std::string format_utc(std::int64_t epoch_seconds);
// Formats milliseconds since the epoch as "2026-01-31T12:00:00.123Z" (RFC 3339).
std::string format_utc_ms(std::int64_t epoch_millis);

}  // namespace getcert
