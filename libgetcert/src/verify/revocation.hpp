#pragma once

// Revocation evidence: stapled OCSP responses, OCSP responders and CRLs over HTTP.

#include <chrono>
#include <cstdint>
#include <vector>

#include "getcert/verify.hpp"
#include "internal/ossl.hpp"

namespace getcert::detail {

struct RevocationContext {
  STACK_OF(X509) * chain;  // the verified chain, leaf first (borrowed)
  std::int64_t now;
  std::chrono::steady_clock::time_point deadline;  // for all requests together
  std::string proxy;                               // VerifyOptions::proxy
  DownloadPolicy policy;                           // VerifyOptions::download_policy
};

// Checks an OCSP response (DER) about chain[depth] issued by chain[depth + 1]: signature,
// freshness and status. `source` is ocsp_staple or ocsp.
RevocationCheck check_ocsp_response(const std::vector<std::uint8_t>& der, int depth,
                                    const RevocationContext& ctx, RevocationSource source,
                                    const std::string& url);

// Checks a CRL (DER or PEM) downloaded from `url` for chain[depth] issued by chain[depth + 1]:
// issuer, signature, freshness and whether it lists the certificate. No network.
RevocationCheck check_crl_bytes(const std::vector<std::uint8_t>& body, int depth,
                                const std::string& url, const RevocationContext& ctx);

// Asks chain[depth]'s OCSP responder, else downloads its CRL. Returns status "error" with the
// reason when no responder/CRL answered; source and status "none" when the certificate names
// neither.
RevocationCheck check_online(int depth, const RevocationContext& ctx);

}  // namespace getcert::detail
