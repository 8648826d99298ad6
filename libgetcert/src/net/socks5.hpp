#pragma once

// The SOCKS5 CONNECT exchange (RFC 1928) with username/password authentication (RFC 1929), on
// a socket already connected to the proxy.

#include <cstdint>
#include <string>
#include <string_view>

#include "getcert/error.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

struct Socks5Request {
  std::string proxy_display;  // "127.0.0.1:1080", for messages
  std::string username;       // empty: offer no authentication
  std::string password;
  std::string host;  // an IP literal, or a name the proxy resolves (socks5h)
  std::uint16_t port = 0;
};

// Runs the greeting, the authentication and the CONNECT request. Returns the proxy's reply code
// (0: connected, the socket now carries the target's bytes; else see socks5_reply_text). Errors
// (connect_failed, timeout) are proxies that refuse the authentication or break the
// protocol; their messages name the proxy and what it answered.
Result<std::uint8_t> socks5_connect(int fd, Clock::time_point deadline,
                                    const Socks5Request& request);

// RFC 1928's words for a reply code: "connection refused", "host unreachable"...
std::string socks5_reply_text(std::uint8_t code);

}  // namespace getcert::detail
