#pragma once

// The STARTTLS preambles that live in files of their own (starttls_PROTOCOL.cpp), each run by
// negotiate_starttls() on a channel naming the server and bounded by the fetch's deadline:
// NNTP (RFC 4642), ManageSieve (RFC 5804), IRC (the IRCv3 tls extension), XMPP, MySQL and
// SQL Server's TDS; and the readers of the NNTP, ManageSieve and IRC replies. The readers are
// pure (no I/O), so a peer's bytes can be tested and fuzzed without a socket; each caps a
// reply at kMaxReplyLines lines, like replies.hpp.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/error.hpp"
#include "net/line_channel.hpp"
#include "net/replies.hpp"

namespace getcert::detail {

// The preambles, run by negotiate_starttls() on a channel bounded by the fetch's deadline.
// A server that answers but refuses fails with not_tls quoting its answer.
Result<void> nntp_starttls(LineChannel& ch);
Result<void> sieve_starttls(LineChannel& ch);
Result<void> irc_starttls(LineChannel& ch);

// "<peer> did not accept the switch to TLS (it answered "...")", the words of every STARTTLS
// refusal.
inline Error starttls_refused(const LineChannel& ch, const std::string& answer) {
  return {Errc::not_tls, ch.peer() + " did not accept the switch to TLS (it answered " +
                             quote_untrusted(answer, kPeerQuoteMax) + ")"};
}

// A server whose capability list lacks STARTTLS: nothing is sent, the list is quoted.
inline Error starttls_not_offered(const LineChannel& ch, const std::string& capabilities) {
  return {Errc::not_tls, ch.peer() + " does not offer STARTTLS (its capabilities: " +
                             quote_untrusted(capabilities, kPeerQuoteMax) + ")"};
}

// `text` with ASCII letters upper-cased: capability names and commands are case-insensitive.
inline std::string ascii_upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// NNTP's answer to CAPABILITIES (RFC 3977 5.2) after its "101" line: one capability per line
// ("VERSION 2", "READER", "STARTTLS"), ended by a line holding a single ".". Lines that start
// with a dot are dot-stuffed.
class NntpCapabilities {
 public:
  Result<bool> add(std::string line);
  // The list names `label` (case-insensitive, as RFC 3977 says capability labels are).
  bool offers(std::string_view label) const;
  // The labels, space-separated, for messages.
  std::string labels() const;

 private:
  int lines_ = 0;
  std::vector<std::string> labels_;  // upper-cased
};

// The three-digit code that starts an NNTP response line ("382 Continue"), or "" when the line
// does not start with one.
std::string nntp_code(const std::string& line);

// A ManageSieve server's response (RFC 5804 1.2, 4): capability lines, each a quoted string or
// literal naming the capability and an optional value, then OK, NO or BYE with an optional
// response code in parentheses and an optional human-readable string. A string may be a
// literal ("{12}" at the end of a line, then exactly 12 octets, then the rest of the line), so
// the reader asks for lines or octets in turn.
class SieveResponse {
 public:
  enum class Next { line, literal, done };
  enum class Status { none, ok, no, bye };

  // Takes a line without its CR LF. After Next::literal, the caller reads literal_size() octets
  // and passes them to add_literal(); then the line goes on with the next add_line().
  Result<Next> add_line(const std::string& line);
  Result<Next> add_literal(const std::string& octets);
  std::size_t literal_size() const noexcept { return literal_size_; }

  Status status() const noexcept { return status_; }
  // Capability names the server listed, upper-cased (they are case-insensitive).
  const std::vector<std::string>& capabilities() const noexcept { return capabilities_; }
  bool offers(std::string_view name) const;
  // The final OK/NO/BYE line as the server sent it (literals included), for quoting.
  const std::string& answer() const noexcept { return answer_; }

 private:
  struct Token {
    enum class Kind { atom, string, open, close };
    Kind kind;
    std::string text;
  };
  Result<void> tokenize(std::string_view text);
  Result<Next> finish_line();

  int pieces_ = 0;
  std::size_t literal_size_ = 0;
  std::vector<Token> tokens_;  // of the line being read
  std::string raw_;            // the line being read, as sent
  Status status_ = Status::none;
  std::vector<std::string> capabilities_;
  std::string answer_;
};

// One IRC message (RFC 1459 2.3.1, RFC 2812 2.3.1, with IRCv3 message tags): "@tags" and
// ":prefix" are optional, then the command (a word or a three-digit numeric), then parameters,
// the last of which may follow a ":" and contain spaces. `command` is upper-cased; it is empty
// when the line holds none.
struct IrcMessage {
  std::string prefix;
  std::string command;
  std::vector<std::string> params;
};
IrcMessage parse_irc_message(const std::string& line);

// What an IRC server says after "STARTTLS", until its answer: 670 (RPL_STARTTLS) to go ahead;
// 691 (ERR_STARTTLS), any other error numeric (400-599, e.g. 421 unknown command, 451 not
// registered) or ERROR to refuse. NOTICE lines and other chatter are passed over, and PING is
// answered (pong()), as servers ping a client that is slow to register.
class IrcStartTlsAnswer {
 public:
  Result<bool> add(std::string line);
  bool ok() const noexcept { return ok_; }
  const std::string& last() const noexcept { return last_; }
  // The PONG line (with CR LF) that the last line asked for, and forgets it.
  std::optional<std::string> take_pong();

 private:
  int lines_ = 0;
  bool ok_ = false;
  std::string last_;
  std::optional<std::string> pong_;
};

// XMPP (RFC 6120): a client-to-server stream (jabber:client) or a server-to-server one
// (jabber:server) to `domain`, then <starttls/>.
Result<void> xmpp_preamble(LineChannel& ch, const std::string& domain, bool server_to_server);

// MySQL and MariaDB: the server's initial handshake, then an SSLRequest.
Result<void> mysql_preamble(LineChannel& ch);

// SQL Server (MS-TDS): PRELOGIN asking for encryption; the handshake that follows travels in
// TDS packets (handshake_transport()).
Result<void> mssql_preamble(LineChannel& ch);

}  // namespace getcert::detail
