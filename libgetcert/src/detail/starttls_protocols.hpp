#pragma once

// The preambles that live in files of their own (starttls_PROTOCOL.cpp), each run by
// negotiate_starttls() on a channel naming the server.

#include <string>

#include "detail/line_channel.hpp"
#include "getcert/error.hpp"

namespace getcert::detail {

// XMPP (RFC 6120): a client-to-server stream (jabber:client) or a server-to-server one
// (jabber:server) to `domain`, then <starttls/>.
Result<void> xmpp_preamble(LineChannel& ch, const std::string& domain, bool server_to_server);

// MySQL and MariaDB: the server's initial handshake, then an SSLRequest.
Result<void> mysql_preamble(LineChannel& ch);

// SQL Server (MS-TDS): PRELOGIN asking for encryption; the handshake that follows travels in
// TDS packets (handshake_transport()).
Result<void> mssql_preamble(LineChannel& ch);

}  // namespace getcert::detail
