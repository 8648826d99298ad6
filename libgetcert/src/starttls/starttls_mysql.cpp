// MySQL and MariaDB: the server speaks first (its initial handshake); a client that wants TLS
// answers with an SSLRequest packet instead of logging in, and the handshake follows at once.

#include "internal/try.hpp"
#include "net/line_channel.hpp"
#include "net/replies.hpp"
#include "starttls/mysql_handshake.hpp"
#include "starttls/starttls_protocols.hpp"

namespace getcert::detail {

Result<void> mysql_preamble(LineChannel& ch) {
  GETCERT_TRY_ASSIGN(auto head, ch.read_bytes(4));
  const MysqlPacketHeader header = parse_mysql_packet_header(head);
  if (header.sequence != 0 || header.length == 0) {
    // Not a MySQL packet at all: an SMTP banner, a TLS alert... show what it was.
    return tl::unexpected(Error{Errc::not_tls, ch.peer() + " did not answer like a MySQL server " +
                                                   "(it sent " +
                                                   quote_untrusted(head, kPeerQuoteMax) + ")"});
  }
  if (header.length > kMaxMysqlGreeting) {
    return tl::unexpected(ch.peer_fault(
        {Errc::limit_exceeded,
         "sent a first packet over " + std::to_string(kMaxMysqlGreeting / 1024) + " KiB"}));
  }
  GETCERT_TRY_ASSIGN(auto payload, ch.read_bytes(header.length));
  auto greeting = parse_mysql_greeting(payload);
  if (!greeting) {
    if (greeting.error().code == Errc::unsupported) {
      return tl::unexpected(Error{Errc::not_tls, ch.peer() + " " + greeting.error().message});
    }
    return tl::unexpected(ch.peer_fault(greeting.error()));
  }
  if (greeting->refused) {
    return tl::unexpected(
        Error{Errc::not_tls, ch.peer() + " refused the connection: error " +
                                 std::to_string(greeting->error_code) + " " +
                                 quote_untrusted(greeting->error_message, kPeerQuoteMax)});
  }
  if ((greeting->capabilities & kMysqlSsl) == 0) {
    return tl::unexpected(Error{
        Errc::not_tls, ch.peer() + " " + quote_untrusted(greeting->server_version, kPeerQuoteMax) +
                           " did not offer SSL: its handshake lacks the CLIENT_SSL capability"});
  }
  return ch.send(mysql_ssl_request(*greeting));
}

}  // namespace getcert::detail
