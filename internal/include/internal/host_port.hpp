#pragma once

// How a host and port are written together: "host:port", with IPv6 literals in brackets.

#include <cstdint>
#include <string>
#include <string_view>

namespace getcert::internal {

// The host as a URL authority or Host header writes it: an IPv6 literal (any host holding a
// ':') in brackets, anything else as it is.
std::string bracketed_host(std::string_view host);
// "host:port", "[2001:db8::1]:443".
std::string host_port(std::string_view host, std::uint16_t port);

}  // namespace getcert::internal
