#pragma once

// Plain-text protocol preambles that switch a connection to TLS (STARTTLS and friends), one
// small function per protocol, run on the connected socket before the TLS handshake.

#include <openssl/bio.h>

#include <string>

#include "getcert/endpoint.hpp"
#include "getcert/error.hpp"
#include "getcert/fetch.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

// Checks, before anything is sent, what the preamble will announce: the syntax of
// options.starttls_name, and that XMPP to an IP address has a name for its stream. Fails with
// invalid_argument.
Result<void> check_starttls_options(const ConnectOptions& options, const Endpoint& endpoint);

// Runs the preamble for options.starttls on fd within the deadline. Fails with not_tls when the
// server does not offer or accept the upgrade, timeout, or connect_failed (the socket failed).
Result<void> negotiate_starttls(const ConnectOptions& options, int fd, const Endpoint& endpoint,
                                Clock::time_point deadline);

// What carries the TLS handshake. Every protocol but mssql sends TLS records bare on the
// socket: `socket` is returned as is. mssql wraps them in TDS packets until the handshake is
// over, so a framing BIO is pushed on top of `socket` (nullptr when that fails; `socket` is
// then still the caller's).
BIO* handshake_transport(StartTls protocol, BIO* socket);
// After the handshake: TLS records flow bare from here on (a no-op for bare transports).
void end_handshake_transport(StartTls protocol, BIO* transport);
// The framing rule the server broke when the handshake failed ("SQL Server sent a TDS packet of
// type 0x04 ..."); empty when the framing was not the problem.
std::string handshake_transport_failure(StartTls protocol, BIO* transport);

}  // namespace getcert::detail
