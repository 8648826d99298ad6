// The pre-TLS reply readers without a socket: lines assembled from bytes however they arrive,
// SMTP multi-line replies, IMAP tagged completions, proxy CONNECT answers, their line cap, and
// how peer text is quoted in messages.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "net/line_channel.hpp"
#include "net/replies.hpp"

using Catch::Matchers::Contains;
using getcert::Errc;
using getcert::quote_name;
using getcert::quote_untrusted;
using getcert::detail::kMaxReplyLine;
using getcert::detail::kMaxReplyLines;
using getcert::detail::kPeerQuoteMax;
using getcert::detail::LineAssembler;
using getcert::detail::MultilineReply;
using getcert::detail::ProxyReply;
using getcert::detail::TaggedReply;

TEST_CASE("line assembler: takes bytes up to the LF only, strips CR, caps the length",
          "[starttls]") {
  LineAssembler a;
  auto took = a.take("220 hel");
  REQUIRE(took);
  CHECK(*took == 7);
  CHECK_FALSE(a.complete());
  took = a.take("lo\r\n\x16\x03\x01");  // what follows the LF is the TLS handshake's
  REQUIRE(took);
  CHECK(*took == 4);
  REQUIRE(a.complete());
  CHECK(a.pop() == "220 hello");
  CHECK_FALSE(a.complete());

  LineAssembler long_line;
  REQUIRE(long_line.take(std::string(kMaxReplyLine, 'a')));
  auto over = long_line.take("b");
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::limit_exceeded);
  CHECK(over.error().message == "sent a line longer than 4 KiB");
}

TEST_CASE("SMTP replies: dashes continue, a space ends, more than 100 lines is refused",
          "[starttls]") {
  MultilineReply reply;
  CHECK(reply.add("250-first") == false);
  CHECK(reply.add("250-SIZE 1000") == false);
  CHECK(reply.add("250 STARTTLS") == true);
  CHECK(reply.last() == "250 STARTTLS");

  MultilineReply flood;
  for (int i = 0; i < kMaxReplyLines; ++i) REQUIRE(flood.add("220-again") == false);
  auto over = flood.add("220-again");
  REQUIRE_FALSE(over);
  CHECK(over.error().message == "sent more than 100 lines before answering");
}

TEST_CASE("IMAP replies: untagged lines until the tag, then OK or not", "[starttls]") {
  TaggedReply ok("g1");
  CHECK(ok.add("* CAPABILITY IMAP4rev1") == false);
  CHECK(ok.add("g10 OK not ours") == false);
  CHECK(ok.add("g1 OK Begin TLS") == true);
  CHECK(ok.ok());

  TaggedReply no("g1");
  CHECK(no.add("g1 NO not now") == true);
  CHECK_FALSE(no.ok());
}

TEST_CASE("proxy replies: status line, headers, empty line, and the code is parsed strictly",
          "[starttls]") {
  ProxyReply reply;
  CHECK(reply.add("HTTP/1.1 200 Connection established") == false);
  CHECK(reply.add("Via: 1.1 proxy") == false);
  CHECK(reply.add("") == true);
  CHECK(reply.code() == "200");
  CHECK(reply.established());

  for (const std::string status : {"HTTP/1.1 2000 OK", "HTTP/1.1 2x0 OK", "200 OK", "HTTP/1.1"}) {
    INFO(status);
    ProxyReply odd;
    REQUIRE(odd.add(status) == false);
    CHECK(odd.code().empty());
    CHECK_FALSE(odd.established());
  }
  ProxyReply auth;
  REQUIRE(auth.add("HTTP/1.0 407 Proxy Authentication Required") == false);
  CHECK(auth.code() == "407");
}

TEST_CASE("peer text is quoted escaped and shortened", "[starttls]") {
  CHECK(quote_untrusted("554 no\x1b[2J", kPeerQuoteMax) == "\"554 no\\x1b[2J\"");
  const std::string quoted = quote_untrusted(std::string(200, 'x'), kPeerQuoteMax);
  CHECK(quoted == "\"" + std::string(80, 'x') + "...\"");
  // Exactly at the limit: nothing was cut, so no "...".
  CHECK(quote_untrusted(std::string(80, 'x'), kPeerQuoteMax) == "\"" + std::string(80, 'x') + "\"");
  // Names are quoted whole, in single quotes, escaped the same way.
  CHECK(quote_name(std::string(200, 'y') + "\n") == "'" + std::string(200, 'y') + "\\x0a'");
}

TEST_CASE("LDAP ExtendedResponse: result code and diagnostic, malformed BER refused",
          "[starttls]") {
  using getcert::detail::parse_ldap_extended_response;
  using namespace std::string_literals;
  // messageID 1, ExtendedResponse { resultCode 0, matchedDN "", diagnosticMessage "" }, as
  // slapd answers a StartTLS request it accepts.
  const auto ok = parse_ldap_extended_response("\x02\x01\x01\x78\x07\x0a\x01\x00\x04\x00\x04\x00"s);
  REQUIRE(ok);
  CHECK(ok->code == 0);
  CHECK(ok->diagnostic.empty());
  // resultCode 2 with a diagnostic, long-form length on the response.
  const auto refused = parse_ldap_extended_response(
      "\x02\x01\x01\x78\x81\x25\x0a\x01\x02\x04\x00\x04\x1eunsupported extended operation"s);
  REQUIRE(refused);
  CHECK(refused->code == 2);
  CHECK(refused->diagnostic == "unsupported extended operation");
  CHECK(getcert::detail::ldap_result_name(2) == "protocolError");
  // A BindResponse ([APPLICATION 1]) is not an answer to StartTLS.
  CHECK_FALSE(parse_ldap_extended_response("\x02\x01\x01\x61\x07\x0a\x01\x00\x04\x00\x04\x00"s));
  // Lengths past the end of the message.
  const auto overrun = parse_ldap_extended_response("\x02\x01\x01\x78\x7f\x0a\x01\x00"s);
  REQUIRE_FALSE(overrun);
  CHECK(overrun.error().code == Errc::malformed_input);
  CHECK_FALSE(parse_ldap_extended_response("\x02\x01\x01\x78\x84\xff\xff\xff\xff"s));
  CHECK_FALSE(parse_ldap_extended_response(""));
}
