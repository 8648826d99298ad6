#pragma once

// The plain-text replies read before TLS starts, assembled line by line: SMTP/FTP multi-line
// replies, IMAP tagged completions, an HTTP proxy's CONNECT answer. Pure (no I/O), so a peer's
// bytes can be tested and fuzzed without a socket. Every reply is capped in lines, because a
// peer that never ends its reply would otherwise hold getcert until the deadline.

#include <string>

#include "getcert/error.hpp"
#include "getcert/text.hpp"

namespace getcert::detail {

// Lines in one reply. An SMTP EHLO answer lists about 10 extensions, IMAP servers send a few
// untagged lines, proxies a handful of headers: 100 is far above any of them.
inline constexpr int kMaxReplyLines = 100;

// Each add() takes one line (without CR LF) and returns true when the reply is complete. After
// kMaxReplyLines lines it fails with limit_exceeded, phrased to follow the peer's name.

// SMTP and FTP: "250-..." continues, "250 ..." (or anything else) ends.
class MultilineReply {
 public:
  Result<bool> add(std::string line);
  const std::string& last() const noexcept { return last_; }

 private:
  int lines_ = 0;
  std::string last_;
};

// IMAP: untagged "* ..." lines until the line that starts with the command's tag.
class TaggedReply {
 public:
  explicit TaggedReply(std::string tag) : tag_(std::move(tag)) {}
  Result<bool> add(std::string line);
  // The tagged completion said OK.
  bool ok() const noexcept;
  const std::string& last() const noexcept { return last_; }

 private:
  std::string tag_;
  int lines_ = 0;
  std::string last_;
};

// An HTTP proxy's answer to CONNECT: a status line, header lines, an empty line.
class ProxyReply {
 public:
  Result<bool> add(std::string line);
  const std::string& status_line() const noexcept { return status_line_; }
  // The three-digit status code, or "" when the status line is not HTTP.
  std::string code() const;
  // A 2xx answer: the tunnel is open.
  bool established() const;

 private:
  int lines_ = 0;
  std::string status_line_;
};

// An LDAP server's answer to the StartTLS extended request (RFC 4511 4.12, 4.14): the
// LDAPResult inside an ExtendedResponse.
struct LdapResult {
  int code = -1;           // resultCode: 0 success, 2 protocolError, 52 unavailable...
  std::string diagnostic;  // diagnosticMessage, as the server wrote it
};
// An LDAPMessage's outer SEQUENCE holds at most this much: a StartTLS answer is about 40 bytes,
// the rest is room for a long diagnostic message.
inline constexpr std::size_t kMaxLdapMessage = std::size_t{16} * 1024;
// Parses the contents of the LDAPMessage SEQUENCE (messageID, then the response). Fails with
// malformed_input when it is not an ExtendedResponse.
Result<LdapResult> parse_ldap_extended_response(const std::string& contents);
// RFC 4511's name for a resultCode ("protocolError"), or "" when it has none.
std::string ldap_result_name(int code);

// How much of a peer's answer a message quotes (quote_untrusted(answer, kPeerQuoteMax)).
inline constexpr std::size_t kPeerQuoteMax = 80;

}  // namespace getcert::detail
