#pragma once

// Name resolution with a deadline, on c-ares: the lookup runs on the calling thread, driven by
// poll(), and everything it opened is closed when it returns, so a lookup that misses its
// deadline leaves no thread and no descriptor behind (getaddrinfo() cannot be cancelled, so
// bounding it would take a thread per lookup that outlives the caller).

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/error.hpp"

namespace getcert::detail {

// A DNS server given explicitly (ConnectOptions::resolver).
struct DnsServer {
  int family = 0;             // AF_INET or AF_INET6
  unsigned char address[16];  // in network order: 4 bytes for AF_INET, 16 for AF_INET6
  std::uint16_t port = 53;
  std::string display;  // "192.0.2.1:53", "[2001:db8::1]:53": for messages
};

// Parses "ADDR[:PORT]": an IPv4 address, "[IPv6]" or a bare IPv6 address, the port 53 unless
// given. A name is refused: the resolver's own address cannot need resolving. Empty text is
// nullopt (the system's configuration). invalid_argument, naming the option, otherwise.
Result<std::optional<DnsServer>> parse_dns_server(std::string_view text);

// One address to connect to, with the port already set.
struct ResolvedAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family() const noexcept { return storage.ss_family; }
};

// The addresses of host (an IP literal is parsed, never looked up), v6 and v4 in the order RFC
// 6724 prefers. Without a server, /etc/resolv.conf and /etc/hosts decide, as for the system's
// resolver; with one, /etc/hosts is still read first and the queries go to that server. The
// lookup ends by the deadline whatever the servers do. Errors: timeout (the deadline passed, or
// no server answered), resolve_failed (no such name, no address for it, a server failure or
// refusal, a malformed answer), invalid_argument (a malformed IP literal).
Result<std::vector<ResolvedAddress>> resolve_host(const std::string& host, std::uint16_t port,
                                                  const std::optional<DnsServer>& server,
                                                  std::chrono::steady_clock::time_point deadline);

// "192.0.2.1", "2001:db8::1": an address as messages and results show it.
std::string numeric_text(const ResolvedAddress& address);

}  // namespace getcert::detail
