#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "getcert/starttls.hpp"
#include "internal/try.hpp"
#include "net/line_channel.hpp"
#include "net/replies.hpp"
#include "starttls/starttls.hpp"
#include "starttls/starttls_protocols.hpp"
#include "starttls/tds.hpp"

namespace getcert::detail {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

Error refused(const LineChannel& ch, const std::string& answer) {
  return {Errc::not_tls, ch.peer() + " did not accept the switch to TLS (it answered " +
                             quote_untrusted(answer, kPeerQuoteMax) + ")"};
}

// SMTP replies may span lines: "250-..." continues, "250 ..." ends. Returns the last line.
Result<std::string> smtp_reply(LineChannel& ch) {
  MultilineReply reply;
  GETCERT_TRY(read_reply(ch, reply));
  return reply.last();
}

// The name a client announces in EHLO when none is given: its own address as an address literal
// (RFC 5321 4.1.3), which needs no DNS and which strict servers accept, unlike a bare host name.
std::string local_address_literal(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
      if (inet_ntop(AF_INET, &in->sin_addr, text.data(), text.size()) != nullptr) {
        return "[" + std::string(text.data()) + "]";
      }
    } else if (ss.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
      if (inet_ntop(AF_INET6, &in6->sin6_addr, text.data(), text.size()) != nullptr) {
        return "[IPv6:" + std::string(text.data()) + "]";
      }
    }
  }
  return "[127.0.0.1]";
}

// SMTP (RFC 3207) and LMTP (RFC 2033, SMTP with LHLO in place of EHLO): `hello` is "EHLO" or
// "LHLO", `name` what it announces.
Result<void> smtp(LineChannel& ch, const char* hello, const std::string& name) {
  GETCERT_TRY_ASSIGN(auto greeting, smtp_reply(ch));
  if (!starts_with(greeting, "220")) return tl::unexpected(refused(ch, greeting));
  if (auto ok = ch.send(std::string(hello) + " " + name + "\r\n"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto ehlo, smtp_reply(ch));
  if (!starts_with(ehlo, "250")) return tl::unexpected(refused(ch, ehlo));
  if (auto ok = ch.send("STARTTLS\r\n"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto go, smtp_reply(ch));
  if (!starts_with(go, "220")) return tl::unexpected(refused(ch, go));
  return {};
}

Result<void> imap(LineChannel& ch) {
  GETCERT_TRY_ASSIGN(auto greeting, ch.read_line());
  if (!starts_with(greeting, "* OK")) return tl::unexpected(refused(ch, greeting));
  if (auto ok = ch.send("g1 STARTTLS\r\n"); !ok) return ok;
  TaggedReply reply("g1");  // untagged lines may come first
  if (auto ok = read_reply(ch, reply); !ok) return ok;
  if (!reply.ok()) return tl::unexpected(refused(ch, reply.last()));
  return {};
}

Result<void> pop3(LineChannel& ch) {
  GETCERT_TRY_ASSIGN(auto greeting, ch.read_line());
  if (!starts_with(greeting, "+OK")) return tl::unexpected(refused(ch, greeting));
  if (auto ok = ch.send("STLS\r\n"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto go, ch.read_line());
  if (!starts_with(go, "+OK")) return tl::unexpected(refused(ch, go));
  return {};
}

Result<void> ftp(LineChannel& ch) {
  GETCERT_TRY_ASSIGN(auto greeting, smtp_reply(ch));
  if (!starts_with(greeting, "220")) return tl::unexpected(refused(ch, greeting));
  if (auto ok = ch.send("AUTH TLS\r\n"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto go, smtp_reply(ch));
  if (!starts_with(go, "234")) return tl::unexpected(refused(ch, go));
  return {};
}

Result<void> postgres(LineChannel& ch) {
  // SSLRequest: length 8, code 80877103; the server answers one byte, 'S' to proceed.
  static constexpr std::array<char, 8> kSslRequest{0,    0,   0, 8, 0x04, static_cast<char>(0xd2),
                                                   0x16, 0x2f};
  if (auto ok = ch.send(std::string(kSslRequest.data(), kSslRequest.size())); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto answer, ch.read_bytes(1));
  if (answer != "S")
    return tl::unexpected(refused(ch, answer == "N" ? "N: SSL not enabled" : answer));
  return {};
}

// LDAPv3 StartTLS (RFC 4511 4.14): an ExtendedRequest whose requestName is the StartTLS OID,
// answered by an ExtendedResponse; resultCode 0 means the next byte is TLS.
Result<void> ldap(LineChannel& ch) {
  static constexpr std::string_view kStartTlsOid = "1.3.6.1.4.1.1466.20037";
  // SEQUENCE { INTEGER 1, [APPLICATION 23] { [0] requestName } }
  std::string request{"\x30\x1d\x02\x01\x01\x77\x18\x80\x16", 9};
  request += kStartTlsOid;
  if (auto ok = ch.send(request); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto head, ch.read_bytes(2));
  if (static_cast<unsigned char>(head[0]) != 0x30) {
    return tl::unexpected(refused(ch, head));  // not LDAP at all: quote what it sent
  }
  std::size_t length = static_cast<unsigned char>(head[1]);
  if ((length & 0x80U) != 0) {
    const std::size_t octets = length & 0x7FU;
    if (octets == 0 || octets > 4) {
      return tl::unexpected(
          ch.peer_fault({Errc::malformed_input, "sent a malformed LDAP message"}));
    }
    GETCERT_TRY_ASSIGN(auto more, ch.read_bytes(octets));
    length = 0;
    for (const char c : more) length = (length << 8U) | static_cast<unsigned char>(c);
  }
  if (length > kMaxLdapMessage) {
    return tl::unexpected(
        ch.peer_fault({Errc::limit_exceeded, "sent an LDAP message over " +
                                                 std::to_string(kMaxLdapMessage / 1024) + " KiB"}));
  }
  GETCERT_TRY_ASSIGN(auto body, ch.read_bytes(length));
  auto result = parse_ldap_extended_response(body);
  if (!result) return tl::unexpected(ch.peer_fault(result.error()));
  if (result->code != 0) {
    const std::string name = ldap_result_name(result->code);
    return tl::unexpected(Error{
        Errc::not_tls, ch.peer() + " declined StartTLS: result " + std::to_string(result->code) +
                           (name.empty() ? "" : " (" + name + ")") +
                           (result->diagnostic.empty()
                                ? std::string()
                                : ": " + quote_untrusted(result->diagnostic, kPeerQuoteMax))});
  }
  return {};
}

// Characters --starttls-name may not hold: they would end the SMTP command or break out of the
// XML attribute it goes into.
bool is_forbidden_in_name(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u >= 0x7F || c == '"' || c == '\'' || c == '<' || c == '>' || c == '&';
}

// What a preamble may need besides the channel: the socket (for SMTP's own address), the name
// to announce (--starttls-name, may be empty) and the target.
struct PreambleInput {
  int fd;
  const std::string& name;
  const Endpoint& endpoint;
};
using Preamble = Result<void> (*)(LineChannel&, const PreambleInput&);

// The name SMTP's EHLO and LMTP's LHLO announce: --starttls-name, else our own address.
std::string hello_name(const PreambleInput& in) {
  return in.name.empty() ? local_address_literal(in.fd) : in.name;
}
// The domain an XMPP stream is for: --starttls-name, else the host.
const std::string& xmpp_domain(const PreambleInput& in) {
  return in.name.empty() ? in.endpoint.host : in.name;
}

struct StartTlsRow {
  StartTlsProtocol info;
  Preamble preamble;
};

// The one table of STARTTLS protocols, in the order --help lists them. The CLI reads it
// through starttls_protocols(); negotiate_starttls() and the transport functions below
// dispatch on it.
const std::array<StartTlsRow, 14> kProtocols{{
    {{StartTls::smtp, "smtp", "SMTP server", "", 25, true, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput& in) { return smtp(ch, "EHLO", hello_name(in)); }},
    {{StartTls::imap, "imap", "IMAP server", "", 143, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return imap(ch); }},
    {{StartTls::pop3, "pop3", "POP3 server", "", 110, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return pop3(ch); }},
    {{StartTls::ftp, "ftp", "FTP server", "", 21, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return ftp(ch); }},
    {{StartTls::postgres, "postgres", "PostgreSQL server", "", 5432, false,
      StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return postgres(ch); }},
    {{StartTls::ldap, "ldap", "LDAP server", "", 389, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return ldap(ch); }},
    {{StartTls::xmpp, "xmpp", "XMPP server", "", 5222, true, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput& in) {
       return xmpp_preamble(ch, xmpp_domain(in), /*server_to_server=*/false);
     }},
    {{StartTls::xmpp_server, "xmpp-server", "XMPP server", "", 5269, true, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput& in) {
       return xmpp_preamble(ch, xmpp_domain(in), /*server_to_server=*/true);
     }},
    {{StartTls::mysql, "mysql", "MySQL server", "also MariaDB", 3306, false,
      StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return mysql_preamble(ch); }},
    {{StartTls::mssql, "mssql", "SQL Server", "SQL Server", 1433, false, StartTlsTransport::tds},
     [](LineChannel& ch, const PreambleInput&) { return mssql_preamble(ch); }},
    {{StartTls::lmtp, "lmtp", "LMTP server", "", 24, true, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput& in) { return smtp(ch, "LHLO", hello_name(in)); }},
    {{StartTls::nntp, "nntp", "NNTP server", "", 119, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return nntp_starttls(ch); }},
    {{StartTls::sieve, "sieve", "ManageSieve server", "", 4190, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return sieve_starttls(ch); }},
    {{StartTls::irc, "irc", "IRC server", "", 6667, false, StartTlsTransport::bare},
     [](LineChannel& ch, const PreambleInput&) { return irc_starttls(ch); }},
}};

const StartTlsRow* find_row(StartTls protocol) {
  const auto* row = std::find_if(kProtocols.begin(), kProtocols.end(),
                                 [&](const StartTlsRow& r) { return r.info.protocol == protocol; });
  return row != kProtocols.end() ? row : nullptr;
}

StartTlsTransport transport_of(StartTls protocol) {
  const StartTlsRow* row = find_row(protocol);
  return row != nullptr ? row->info.transport : StartTlsTransport::bare;
}

}  // namespace

Result<void> check_starttls_options(const ConnectOptions& options, const Endpoint& endpoint) {
  const std::string& name = options.starttls_name;
  if (!name.empty()) {
    if (name.size() > 255 || std::any_of(name.begin(), name.end(), is_forbidden_in_name)) {
      return fail(Errc::invalid_argument,
                  "--starttls-name takes a name of at most 255 printable ASCII characters "
                  "without spaces, quotes, '<', '>' or '&' (got " +
                      quote_untrusted(name, kPeerQuoteMax) + ")");
    }
  }
  const bool xmpp = options.starttls == StartTls::xmpp || options.starttls == StartTls::xmpp_server;
  if (xmpp && name.empty() && endpoint.is_ip) {
    return fail(Errc::invalid_argument,
                "--starttls xmpp to an IP address needs --starttls-name: the XMPP domain the "
                "stream is for (" +
                    endpoint.host + " is not a domain)");
  }
  return {};
}

Result<void> negotiate_starttls(const ConnectOptions& options, int fd, const Endpoint& endpoint,
                                Clock::time_point deadline) {
  const StartTlsRow* row = find_row(options.starttls);
  if (row == nullptr) return {};
  LineChannel ch(fd, deadline, std::string(row->info.server), "the STARTTLS exchange",
                 Errc::not_tls);
  return row->preamble(ch, {fd, options.starttls_name, endpoint});
}

BIO* handshake_transport(StartTls protocol, BIO* socket) {
  return transport_of(protocol) == StartTlsTransport::tds ? push_tds_framing(socket) : socket;
}

void end_handshake_transport(StartTls protocol, BIO* transport) {
  if (transport_of(protocol) == StartTlsTransport::tds) end_tds_framing(transport);
}

std::string handshake_transport_failure(StartTls protocol, BIO* transport) {
  const StartTlsRow* row = find_row(protocol);
  if (row == nullptr || row->info.transport != StartTlsTransport::tds) return {};
  const std::string why = tds_framing_failure(transport);
  return why.empty() ? why : std::string(row->info.server) + " " + why;
}

}  // namespace getcert::detail

namespace getcert {

const std::vector<StartTlsProtocol>& starttls_protocols() {
  static const std::vector<StartTlsProtocol> protocols = [] {
    std::vector<StartTlsProtocol> out;
    out.reserve(detail::kProtocols.size());
    for (const auto& row : detail::kProtocols) out.push_back(row.info);
    return out;
  }();
  return protocols;
}

const StartTlsProtocol* find_starttls(StartTls protocol) {
  const auto& all = starttls_protocols();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const StartTlsProtocol& p) { return p.protocol == protocol; });
  return it != all.end() ? &*it : nullptr;
}

const StartTlsProtocol* find_starttls(std::string_view spelling) {
  const auto& all = starttls_protocols();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const StartTlsProtocol& p) { return p.spelling == spelling; });
  return it != all.end() ? &*it : nullptr;
}

}  // namespace getcert
