#pragma once

// Downloading a certificate's issuer from its Authority Information Access "CA Issuers" URL,
// the way browsers complete chains that servers sent incomplete.

#include <chrono>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

// Certificates found at `url` before `deadline`: a DER or PEM certificate, or a certs-only
// PKCS#7 (DER or PEM). `proxy`: VerifyOptions::proxy.
Result<std::vector<Certificate>> download_issuers(const std::string& url,
                                                  Clock::time_point deadline,
                                                  const std::string& proxy);

}  // namespace getcert::detail
