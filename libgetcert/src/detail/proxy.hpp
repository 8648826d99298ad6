#pragma once

// Reaching a TLS endpoint through an HTTP proxy with CONNECT (what corporate networks require).

#include <chrono>
#include <cstdint>
#include <string>

#include "detail/dial.hpp"
#include "getcert/endpoint.hpp"
#include "getcert/error.hpp"

namespace getcert::detail {

struct ProxyUrl {
  std::string host;
  std::uint16_t port = 80;
  std::string authorization;  // "Basic ..." when the URL carries user:password, else empty
  std::string display;        // host:port, for messages (never the credentials)
};

// Parses "http://[user:password@]host[:port]" (port defaults to 80). invalid_argument otherwise.
Result<ProxyUrl> parse_proxy_url(const std::string& url);

// Connects to the proxy and asks it to CONNECT to target. Errors: connect_failed (proxy refused
// or unreachable, with its status line), timeout, io_error.
Result<Connection> dial_via_proxy(const ProxyUrl& proxy, const Endpoint& target,
                                  Clock::time_point deadline,
                                  std::chrono::milliseconds connect_timeout);

}  // namespace getcert::detail
