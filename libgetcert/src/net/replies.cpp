#include "net/replies.hpp"

#include "getcert/text.hpp"
#include "internal/try.hpp"

namespace getcert::detail {
namespace {

Result<bool> too_many_lines() {
  return fail(Errc::limit_exceeded,
              "sent more than " + std::to_string(kMaxReplyLines) + " lines before answering");
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<bool> MultilineReply::add(std::string line) {
  if (++lines_ > kMaxReplyLines) return too_many_lines();
  last_ = std::move(line);
  return last_.size() < 4 || last_[3] != '-';
}

Result<bool> TaggedReply::add(std::string line) {
  if (++lines_ > kMaxReplyLines) return too_many_lines();
  last_ = std::move(line);
  return last_.rfind(tag_ + " ", 0) == 0;
}

bool TaggedReply::ok() const noexcept { return last_.rfind(tag_ + " OK", 0) == 0; }

Result<bool> ProxyReply::add(std::string line) {
  if (++lines_ > kMaxReplyLines) return too_many_lines();
  if (lines_ == 1) {
    status_line_ = std::move(line);
    return false;
  }
  return line.empty();  // the headers end with an empty line; after it the tunnel is open
}

std::string ProxyReply::code() const {
  // "HTTP/1.1 200 Connection established"
  if (status_line_.rfind("HTTP/", 0) != 0) return {};
  const auto space = status_line_.find(' ');
  if (space == std::string::npos || space + 4 > status_line_.size()) return {};
  std::string code = status_line_.substr(space + 1, 3);
  for (const char c : code) {
    if (!is_digit(c)) return {};
  }
  if (space + 4 < status_line_.size() && status_line_[space + 4] != ' ') return {};
  return code;
}

bool ProxyReply::established() const {
  const std::string c = code();
  return !c.empty() && c[0] == '2';
}

namespace {

// One BER element of `in` at `pos`: its tag, and its contents. Definite lengths only (LDAP
// requires them), of at most 4 length octets.
struct BerElement {
  unsigned char tag = 0;
  std::string contents;
};

Result<BerElement> read_ber(const std::string& in, std::size_t& pos) {
  auto bad = [] { return fail(Errc::malformed_input, "sent a malformed LDAP message"); };
  if (pos + 2 > in.size()) return bad();
  BerElement e;
  e.tag = static_cast<unsigned char>(in[pos++]);
  std::size_t len = static_cast<unsigned char>(in[pos++]);
  if (len & 0x80U) {
    const std::size_t octets = len & 0x7FU;
    if (octets == 0 || octets > 4 || pos + octets > in.size()) return bad();
    len = 0;
    for (std::size_t i = 0; i < octets; ++i) {
      len = (len << 8U) | static_cast<unsigned char>(in[pos++]);
    }
  }
  if (len > in.size() - pos) return bad();
  e.contents = in.substr(pos, len);
  pos += len;
  return e;
}

}  // namespace

Result<LdapResult> parse_ldap_extended_response(const std::string& contents) {
  constexpr unsigned char kInteger = 0x02;
  constexpr unsigned char kOctetString = 0x04;
  constexpr unsigned char kEnumerated = 0x0A;
  constexpr unsigned char kExtendedResponse = 0x78;  // [APPLICATION 24], constructed
  std::size_t pos = 0;
  GETCERT_TRY_ASSIGN(auto id, read_ber(contents, pos));
  GETCERT_TRY_ASSIGN(auto op, read_ber(contents, pos));
  if (id.tag != kInteger || op.tag != kExtendedResponse) {
    return fail(Errc::malformed_input, "did not answer with an LDAP ExtendedResponse");
  }
  std::size_t at = 0;
  GETCERT_TRY_ASSIGN(auto code, read_ber(op.contents, at));
  GETCERT_TRY_ASSIGN(auto matched, read_ber(op.contents, at));
  GETCERT_TRY_ASSIGN(auto diagnostic, read_ber(op.contents, at));
  if (code.tag != kEnumerated || code.contents.empty() || code.contents.size() > 4 ||
      matched.tag != kOctetString || diagnostic.tag != kOctetString) {
    return fail(Errc::malformed_input, "sent an LDAP result that does not parse");
  }
  LdapResult result;
  result.code = 0;
  for (const char c : code.contents) {
    result.code = static_cast<int>((static_cast<unsigned>(result.code) << 8U) |
                                   static_cast<unsigned char>(c));
  }
  result.diagnostic = diagnostic.contents;
  return result;
}

std::string ldap_result_name(int code) {
  switch (code) {
    case 0:
      return "success";
    case 1:
      return "operationsError";
    case 2:
      return "protocolError";
    case 7:
      return "authMethodNotSupported";
    case 8:
      return "strongerAuthRequired";
    case 12:
      return "unavailableCriticalExtension";
    case 13:
      return "confidentialityRequired";
    case 51:
      return "busy";
    case 52:
      return "unavailable";
    case 53:
      return "unwillingToPerform";
    case 80:
      return "other";
    default:
      return "";
  }
}

}  // namespace getcert::detail
