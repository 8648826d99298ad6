#pragma once

// Minimal HTTP for the certificate ecosystem (AIA issuers, OCSP, CRLs): plain http:// URLs,
// bounded time and size, no cookies, no TLS.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/error.hpp"

namespace getcert::detail {

inline constexpr std::size_t kMaxHttpBody = std::size_t{10} * 1024 * 1024;

// GET url; fails with connect_failed/timeout/io_error and a message naming the URL.
Result<std::vector<std::uint8_t>> http_get(const std::string& url,
                                           std::chrono::milliseconds timeout);

// POST body with content_type to url (OCSP requests).
Result<std::vector<std::uint8_t>> http_post(const std::string& url, const std::string& content_type,
                                            const std::vector<std::uint8_t>& body,
                                            std::chrono::milliseconds timeout);

}  // namespace getcert::detail
