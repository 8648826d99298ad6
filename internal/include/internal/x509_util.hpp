#pragma once

// Conversions between OpenSSL X509 handles and the public Certificate model.

#include <cstdint>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "internal/owners.hpp"

namespace getcert::internal {

// Builds the model from a live handle; der is the handle's encoding.
Result<Certificate> certificate_from_x509(X509* cert);
// Parses one whole DER certificate into the model, keeping the exact input bytes as its der;
// when `handle` is given, the decoded X509 is handed out too, so a caller that needs both
// decodes once (OpenSSL 3.0 sets up its key decoders anew for each certificate). Errors:
// malformed_input.
Result<Certificate> certificate_from_der(const std::vector<std::uint8_t>& der,
                                         X509Ptr* handle = nullptr);
// Parses the model's DER back into a handle (never fails for a model made by this library).
X509Ptr x509_from_certificate(const Certificate& cert);
// A distinguished name as Certificate::subject shows it (RFC 2253 order, UTF-8 kept).
std::string name_to_string(const X509_NAME* name);
// Type, size and curve of a public or private key.
KeyInfo key_info(const EVP_PKEY* key);
// ASN1_TIME to seconds since the epoch.
std::int64_t asn1_time_to_epoch(const ASN1_TIME* t);

}  // namespace getcert::internal
