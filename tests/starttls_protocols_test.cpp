// The readers of NNTP, ManageSieve and IRC replies before TLS, without a socket: what they
// accept (Dovecot's and ircd's real answers), what they refuse, and their line caps. And the
// library's table of STARTTLS protocols that the CLI reads (getcert/starttls.hpp).

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "getcert/starttls.hpp"
#include "starttls/starttls_protocols.hpp"

using Catch::Matchers::Contains;
using getcert::Errc;
using getcert::detail::IrcStartTlsAnswer;
using getcert::detail::kMaxReplyLine;
using getcert::detail::kMaxReplyLines;
using getcert::detail::nntp_code;
using getcert::detail::NntpCapabilities;
using getcert::detail::parse_irc_message;
using getcert::detail::SieveResponse;
using Next = SieveResponse::Next;
using Status = SieveResponse::Status;

TEST_CASE("NNTP capabilities: labels until the dot line, dot-stuffing, case", "[starttls]") {
  NntpCapabilities caps;
  for (const char* line : {"VERSION 2", "READER", "LIST ACTIVE NEWSGROUPS", "starttls"}) {
    REQUIRE(caps.add(line) == false);
  }
  REQUIRE(caps.add("..HIDDEN") == false);  // a stuffed line that starts with a dot
  REQUIRE(caps.add(".") == true);
  CHECK(caps.offers("STARTTLS"));
  CHECK(caps.offers("reader"));
  CHECK(caps.offers(".HIDDEN"));
  CHECK_FALSE(caps.offers("ACTIVE"));  // an argument, not a label
  CHECK(caps.labels() == "VERSION READER LIST STARTTLS .HIDDEN");

  NntpCapabilities flood;
  for (int i = 0; i < kMaxReplyLines; ++i) REQUIRE(flood.add("X-AGAIN") == false);
  auto over = flood.add("X-AGAIN");
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::limit_exceeded);
  CHECK(over.error().message == "sent more than 100 lines before answering");
}

TEST_CASE("NNTP response codes: three digits, then a space or the end", "[starttls]") {
  CHECK(nntp_code("382 Continue with TLS negotiation") == "382");
  CHECK(nntp_code("200") == "200");
  CHECK(nntp_code("2000 no").empty());
  CHECK(nntp_code("38").empty());
  CHECK(nntp_code("x82 no").empty());
  CHECK(nntp_code("").empty());
}

TEST_CASE("ManageSieve: Dovecot's greeting is capabilities, then OK", "[starttls]") {
  // What dovecot-managesieved 2.3 sends, line for line.
  const std::vector<std::string> greeting{
      R"("IMPLEMENTATION" "Dovecot (Debian) Pigeonhole")",
      R"("SIEVE" "fileinto reject envelope encoded-character vacation")",
      R"("NOTIFY" "mailto")",
      R"("SASL" "PLAIN")",
      R"("STARTTLS")",
      R"("VERSION" "1.0")",
  };
  SieveResponse r;
  for (const auto& line : greeting) REQUIRE(r.add_line(line) == Next::line);
  REQUIRE(r.add_line(R"(OK "Dovecot (Debian) ready.")") == Next::done);
  CHECK(r.status() == Status::ok);
  CHECK(r.offers("STARTTLS"));
  CHECK(r.offers("starttls"));
  CHECK_FALSE(r.offers("PLAIN"));  // a value, not a capability
  CHECK(r.capabilities() == std::vector<std::string>{"IMPLEMENTATION", "SIEVE", "NOTIFY", "SASL",
                                                     "STARTTLS", "VERSION"});
  CHECK(r.answer() == R"(OK "Dovecot (Debian) ready.")");
}

TEST_CASE("ManageSieve: NO and BYE with response codes, escapes, case", "[starttls]") {
  SieveResponse no;
  REQUIRE(no.add_line(R"(no (TRYLATER) "TLS \"later\" \\ please")") == Next::done);
  CHECK(no.status() == Status::no);
  CHECK(no.answer() == R"(no (TRYLATER) "TLS \"later\" \\ please")");

  SieveResponse bye;
  REQUIRE(bye.add_line(R"(BYE "Too many connections")") == Next::done);
  CHECK(bye.status() == Status::bye);

  SieveResponse bare;
  REQUIRE(bare.add_line("OK") == Next::done);
  CHECK(bare.status() == Status::ok);
  CHECK(bare.capabilities().empty());
}

TEST_CASE("ManageSieve: what does not parse, and what is too long, is refused", "[starttls]") {
  const auto error_of = [](const std::vector<std::string>& lines) {
    SieveResponse r;
    for (const auto& line : lines) {
      auto next = r.add_line(line);
      if (!next) return next.error();
    }
    FAIL("accepted");
    return getcert::Error{};
  };
  for (const std::string line : {R"("STARTTLS)",      // a quoted string ends on its line
                                 R"("SASL" "PLAIN)",  // ... a value's too
                                 "HELLO there",  // neither a capability (a string) nor OK/NO/BYE
                                 "",             // an empty line is neither
                                 R"("SIEVE" {12a})",    // a literal's size is digits
                                 "{}",                  // ... at least one
                                 "{12345678901}",       // ... and at most 10
                                 R"(("STARTTLS"))"}) {  // a capability is not in parentheses
    INFO(line);
    const auto e = error_of({line});
    CHECK(e.code == Errc::malformed_input);
    CHECK(e.message == "sent a ManageSieve response that does not parse");
  }
  const auto big = error_of({"{" + std::to_string(kMaxReplyLine + 1) + "}"});
  CHECK(big.code == Errc::limit_exceeded);
  CHECK(big.message == "sent a ManageSieve literal longer than 4 KiB");

  SieveResponse short_literal;
  REQUIRE(short_literal.add_line("{9}") == Next::literal);
  auto wrong = short_literal.add_literal("STARTTLS");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == Errc::malformed_input);

  SieveResponse flood;
  for (int i = 0; i < kMaxReplyLines; ++i) REQUIRE(flood.add_line(R"("X-AGAIN")") == Next::line);
  auto over = flood.add_line(R"("X-AGAIN")");
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::limit_exceeded);
  CHECK(over.error().message == "sent more than 100 lines before answering");
}

TEST_CASE("ManageSieve: a literal of the announced size continues its line", "[starttls]") {
  SieveResponse r;
  REQUIRE(r.add_line(R"("SIEVE" {10})") == Next::literal);
  REQUIRE(r.add_literal("a\r\n\"b\" {3}") == Next::line);
  REQUIRE(r.add_line("") == Next::line);
  REQUIRE(r.add_line("{0}") == Next::literal);
  REQUIRE(r.add_literal("") == Next::line);
  REQUIRE(r.add_line(R"( "empty name")") == Next::line);
  REQUIRE(r.add_line("NO {5}") == Next::literal);
  REQUIRE(r.add_literal("nope!") == Next::line);
  REQUIRE(r.add_line("") == Next::done);
  CHECK(r.status() == Status::no);
  CHECK(r.capabilities() == std::vector<std::string>{"SIEVE", ""});
  CHECK(r.answer() == "NO {5}\r\nnope!");
}

TEST_CASE("IRC messages: tags, prefix, command, middle and trailing parameters", "[starttls]") {
  auto m = parse_irc_message(":irc.example.net 670 nick :STARTTLS successful, go ahead");
  CHECK(m.prefix == "irc.example.net");
  CHECK(m.command == "670");
  CHECK(m.params == std::vector<std::string>{"nick", "STARTTLS successful, go ahead"});

  m = parse_irc_message("@time=2026-01-01T00:00:00Z :srv  notice   *  :*** Looking up");
  CHECK(m.prefix == "srv");
  CHECK(m.command == "NOTICE");
  CHECK(m.params == std::vector<std::string>{"*", "*** Looking up"});

  m = parse_irc_message("PING :a b");
  CHECK(m.prefix.empty());
  CHECK(m.command == "PING");
  CHECK(m.params == std::vector<std::string>{"a b"});

  m = parse_irc_message("PING token");
  CHECK(m.params == std::vector<std::string>{"token"});

  CHECK(parse_irc_message("").command.empty());
  CHECK(parse_irc_message(":only-a-prefix").command.empty());
  CHECK(parse_irc_message("@tags-only").command.empty());
}

TEST_CASE("IRC STARTTLS answers: 670 goes, 691 and errors refuse, PING is answered", "[starttls]") {
  IrcStartTlsAnswer ok;
  CHECK(ok.add(":srv NOTICE * :*** Looking up your hostname...") == false);
  CHECK_FALSE(ok.take_pong());
  CHECK(ok.add("PING :4711") == false);
  CHECK(ok.take_pong() == std::string("PONG :4711\r\n"));
  CHECK_FALSE(ok.take_pong());  // answered once
  CHECK(ok.add("PING x\ry") == false);
  CHECK(ok.take_pong() == std::string("PONG :xy\r\n"));  // no CR of the peer's in our line
  CHECK(ok.add(":srv 670 * :STARTTLS successful, go ahead with TLS handshake") == true);
  CHECK(ok.ok());

  for (const std::string refusal :
       {":srv 691 * :STARTTLS failed (Wrong moon phase)", ":srv 421 * STARTTLS :Unknown command",
        ":srv 451 * STARTTLS :You have not registered",
        "ERROR :Closing Link: 127.0.0.1 (Ping timeout)"}) {
    IrcStartTlsAnswer no;
    CHECK(no.add(refusal) == true);
    CHECK_FALSE(no.ok());
    CHECK(no.last() == refusal);
  }

  IrcStartTlsAnswer chatter;  // other numerics and commands are not the answer
  CHECK(chatter.add(":srv 020 * :Please wait while we process your connection.") == false);
  CHECK(chatter.add(":srv CAP * LS :tls sasl") == false);
  CHECK(chatter.add("") == false);

  IrcStartTlsAnswer flood;
  for (int i = 0; i < kMaxReplyLines; ++i) REQUIRE(flood.add(":srv NOTICE * :hi") == false);
  auto over = flood.add(":srv NOTICE * :hi");
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::limit_exceeded);
  CHECK(over.error().message == "sent more than 100 lines before answering");
}

TEST_CASE("STARTTLS table: one row per protocol, as the CLI and the docs promise", "[starttls]") {
  using getcert::StartTls;
  using getcert::StartTlsTransport;
  // Restated here, so a changed port, spelling or rule breaks this test and not a user's script.
  // spelling, default port, announces a name, transport
  const std::vector<std::tuple<StartTls, std::string_view, int, bool, StartTlsTransport>> want{
      {StartTls::smtp, "smtp", 25, true, StartTlsTransport::bare},
      {StartTls::imap, "imap", 143, false, StartTlsTransport::bare},
      {StartTls::pop3, "pop3", 110, false, StartTlsTransport::bare},
      {StartTls::ftp, "ftp", 21, false, StartTlsTransport::bare},
      {StartTls::postgres, "postgres", 5432, false, StartTlsTransport::bare},
      {StartTls::ldap, "ldap", 389, false, StartTlsTransport::bare},
      {StartTls::xmpp, "xmpp", 5222, true, StartTlsTransport::bare},
      {StartTls::xmpp_server, "xmpp-server", 5269, true, StartTlsTransport::bare},
      {StartTls::mysql, "mysql", 3306, false, StartTlsTransport::bare},
      {StartTls::mssql, "mssql", 1433, false, StartTlsTransport::tds},
      {StartTls::lmtp, "lmtp", 24, true, StartTlsTransport::bare},
      {StartTls::nntp, "nntp", 119, false, StartTlsTransport::bare},
      {StartTls::sieve, "sieve", 4190, false, StartTlsTransport::bare},
      {StartTls::irc, "irc", 6667, false, StartTlsTransport::bare}};
  const auto& table = getcert::starttls_protocols();
  REQUIRE(table.size() == want.size());
  std::set<std::string_view> spellings;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& [protocol, spelling, port, announces, transport] = want[i];
    INFO(spelling);
    const auto& row = table[i];  // the order --help lists them in
    CHECK(row.protocol == protocol);
    CHECK(row.spelling == spelling);
    CHECK(row.default_port == port);
    CHECK(row.announces_name == announces);
    CHECK(row.transport == transport);
    CHECK_FALSE(row.server.empty());
    CHECK(spellings.insert(row.spelling).second);
    CHECK(getcert::find_starttls(protocol) == &row);
    CHECK(getcert::find_starttls(spelling) == &row);
  }
  CHECK(getcert::find_starttls(StartTls::none) == nullptr);
  CHECK(getcert::find_starttls(std::string_view("gopher")) == nullptr);
  CHECK(getcert::find_starttls(std::string_view("SMTP")) == nullptr);  // the CLI lower-cases
}
