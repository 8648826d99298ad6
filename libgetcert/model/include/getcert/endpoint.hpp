#pragma once

// Parsing of the targets users type: "host", "host:port", "[v6]:port", bare IPv4/IPv6 and
// "https://host[:port]/path". Public header: C++17, no OpenSSL types.

#include <cstdint>
#include <string>
#include <string_view>

#include "getcert/error.hpp"

namespace getcert {

struct Endpoint {
  std::string host;  // DNS name (no trailing dot, lowercase ASCII) or IP literal (no brackets)
  std::uint16_t port = 443;
  bool is_ip = false;  // host is an IPv4 or IPv6 literal

  // "host:port", with brackets around IPv6 literals.
  std::string to_string() const;
};

// Parses a user-typed target. Never touches the network. Fails with invalid_argument and a
// message that names the problem ("port 70000 is out of range 1-65535").
Result<Endpoint> parse_endpoint(std::string_view text, std::uint16_t default_port = 443);

// Canonical form of a DNS name for sending (SNI) and matching: lowercase, no trailing dot,
// internationalised labels converted to A-labels (IDNA 2008, "bücher.example" ->
// "xn--bcher-kva.example"). Fails with invalid_argument for names that cannot be valid.
Result<std::string> normalize_hostname(std::string_view name);

// True when text is an IPv4 or IPv6 address literal (no brackets, no port).
bool is_ip_literal(std::string_view text);

}  // namespace getcert
