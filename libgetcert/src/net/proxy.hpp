#pragma once

// Reaching an endpoint through a proxy: HTTP CONNECT (what corporate networks require) or SOCKS5
// (SSH tunnels, Tor, bastions).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "getcert/endpoint.hpp"
#include "getcert/error.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

enum class ProxyKind { http, socks5, socks5h };

struct ProxyUrl {
  ProxyKind kind = ProxyKind::http;
  std::string host;
  std::uint16_t port = 80;
  std::string authorization;  // http: "Basic ..." when the URL carries user:password, else empty
  std::string username;       // socks5: RFC 1929 credentials when the URL carries them
  std::string password;
  std::string display;  // host:port, for messages (never the credentials)
};

// Parses "http://[user:password@]host[:port]" (port defaults to 80) and
// "socks5://" / "socks5h://[user:password@]host[:port]" (port defaults to 1080).
// invalid_argument otherwise.
Result<ProxyUrl> parse_proxy_url(const std::string& url);

// Connects to the proxy and asks it to CONNECT to target. With socks5, getcert resolves the
// target and tries each address through the proxy in turn; with socks5h the proxy resolves it.
// Errors: connect_failed (proxy refused or unreachable, with its answer), resolve_failed (socks5:
// the target's name), timeout. Names (the proxy's, a socks5 target's) are looked up with
// `resolver` when given.
Result<Connection> dial_via_proxy(const ProxyUrl& proxy, const Endpoint& target,
                                  Clock::time_point deadline,
                                  std::chrono::milliseconds connect_timeout,
                                  const std::optional<DnsServer>& resolver = {});

}  // namespace getcert::detail
