#pragma once

// The STARTTLS protocols getcert speaks, as one table: the spelling --starttls takes, the port a
// target without one gets, whether the preamble announces a name of ours, and how the handshake
// travels afterwards. The CLI builds its option, its help and its checks from this table, so a
// new protocol is one row (and its preamble) in the library. Public header: C++17, no OpenSSL
// types.

#include <cstdint>
#include <string_view>
#include <vector>

#include "getcert/fetch.hpp"

namespace getcert {

// How the TLS handshake travels once the preamble is over.
enum class StartTlsTransport {
  bare,  // TLS records straight on the socket
  tds,   // inside TDS packets until the handshake is over (SQL Server)
};

struct StartTlsProtocol {
  StartTls protocol = StartTls::none;
  std::string_view spelling;       // what --starttls takes: "smtp", "xmpp-server"
  std::string_view server;         // who answers, as messages name it: "SMTP server"
  std::string_view aka;            // what else it covers, for --help ("also MariaDB"); may be empty
  std::uint16_t default_port = 0;  // for a target that names no port
  // The preamble sends a name of ours (--starttls-name): the SMTP EHLO / LMTP LHLO name or the
  // XMPP domain.
  bool announces_name = false;
  StartTlsTransport transport = StartTlsTransport::bare;
};

// Every protocol (not StartTls::none), in the order --help lists them.
const std::vector<StartTlsProtocol>& starttls_protocols();
// The row of `protocol`; nullptr for StartTls::none.
const StartTlsProtocol* find_starttls(StartTls protocol);
// The row spelled `spelling` (exactly, as --starttls takes it); nullptr when there is none.
const StartTlsProtocol* find_starttls(std::string_view spelling);

}  // namespace getcert
