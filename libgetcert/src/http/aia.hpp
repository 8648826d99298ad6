#pragma once

// Downloading a certificate's issuer from its Authority Information Access "CA Issuers" URL,
// the way browsers complete chains that servers sent incomplete.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "getcert/verify.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

// The most certificates one AIA answer may contribute. A CA Issuers answer is the issuer, at
// most with a few cross-certificates (bridge CAs publish a few dozen); thousands are hostile,
// and each costs a full decode.
inline constexpr std::size_t kMaxAiaCertificates = 100;

// Certificates found at `url` before `deadline`: a DER or PEM certificate, or a certs-only
// PKCS#7 (DER or PEM). `proxy` and `policy`: VerifyOptions::proxy and download_policy.
Result<std::vector<Certificate>> download_issuers(const std::string& url,
                                                  Clock::time_point deadline,
                                                  const std::string& proxy,
                                                  const DownloadPolicy& policy = {});

// The certificates in an AIA answer `body` from `url`, decoded one at a time, each only while
// `deadline` has not passed (`budget` is what the whole download had, for the message), and at
// most kMaxAiaCertificates of them: a PKCS#7 is walked element by element rather than decoded
// whole, because OpenSSL would decode every certificate in it first. Errors: timeout,
// limit_exceeded, malformed_input; each message names `url`.
Result<std::vector<Certificate>> decode_aia_answer(const std::vector<std::uint8_t>& body,
                                                   const std::string& url,
                                                   Clock::time_point deadline,
                                                   std::chrono::milliseconds budget);

}  // namespace getcert::detail
