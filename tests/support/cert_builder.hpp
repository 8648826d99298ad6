#pragma once

// Certificates made in the test itself with OpenSSL's API, for chains the generated PKI cannot
// hold (hundreds of same-name issuers, cycles, constraints of every shape). P-256 keys, so
// hundreds of them cost milliseconds. Issuers are named by CN and key identifiers are computed
// from the keys, so a certificate can name an issuer that was never made.

#include <openssl/evp.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "internal/owners.hpp"

namespace getcert::test {

inline const std::int64_t kNow = static_cast<std::int64_t>(std::time(nullptr));
constexpr std::int64_t kDay = 86400;

// A fresh P-256 key.
internal::EvpPkeyPtr new_key();

struct CertSpec {
  std::string subject;        // CN
  std::string subject_email;  // an emailAddress in the subject; empty = none
  std::string issuer;         // CN of the issuer (the subject's, for a root)
  EVP_PKEY* key = nullptr;
  EVP_PKEY* signer = nullptr;  // == key: self-signed, no authorityKeyIdentifier
  bool ca = true;              // CA: keyCertSign and a subjectKeyIdentifier; else a leaf
  std::int64_t not_before = kNow - kDay;
  std::int64_t not_after = kNow + 30 * kDay;
  std::string name_constraints;  // "permitted;DNS:other.test"; empty = none
  bool name_constraints_critical = true;
  std::string san;                 // "DNS:host.test, email:a@b.test"; empty = none
  std::string eku = "serverAuth";  // leaf only
};

// The spec of a CA certificate CN=subject under CN=issuer; set the other fields on the copy.
CertSpec cert_spec(const std::string& subject, const std::string& issuer, EVP_PKEY* key,
                   EVP_PKEY* signer);

// Builds, signs (SHA-256) and returns the certificate; REQUIREs every OpenSSL step.
internal::X509Ptr make_cert(const CertSpec& spec);

// getcert's model of it (through DER, as a peer would send it).
Certificate model(const internal::X509Ptr& cert);

// `cert` signed again by `signer` (SHA-256): the same tbsCertificate under a new signature,
// which for an ECDSA signer differs each time, as when a CA signs the same TBS twice.
internal::X509Ptr resign(const internal::X509Ptr& cert, EVP_PKEY* signer);

// `cert` with one more extension, `oid` (dotted) with the DER `value`, inserted at `position`
// among the extensions (-1: last), then signed by `signer`; the rest of its TBS is unchanged.
internal::X509Ptr with_extension(const internal::X509Ptr& cert, const std::string& oid,
                                 const std::vector<std::uint8_t>& value, bool critical,
                                 int position, EVP_PKEY* signer);

// `cert` without any extension (a v3 certificate with none), signed by `signer`.
internal::X509Ptr without_extensions(const internal::X509Ptr& cert, EVP_PKEY* signer);

// The first certificate of a PEM file, and the private key of a PEM key file.
internal::X509Ptr read_certificate(const std::string& path);
internal::EvpPkeyPtr read_private_key(const std::string& path);

}  // namespace getcert::test
