// The pure readers of the binary and XML STARTTLS preambles: XMPP streams as prosody sends them
// (split anywhere), a MariaDB greeting and the SSLRequest answering it, and TDS PRELOGIN.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "starttls/mysql_handshake.hpp"
#include "starttls/tds.hpp"
#include "starttls/xmpp_reader.hpp"

using namespace std::string_literals;
using getcert::detail::XmppEvent;
using getcert::detail::XmppReader;

namespace {

// prosody 0.12's answer to a c2s stream header, then its <proceed/>, byte for byte.
const std::string kProsody =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' from='localhost' xml:lang='en' "
    "id='4f4bae64' version='1.0' xmlns:stream='http://etherx.jabber.org/streams'>"
    "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>"
    "</stream:features><proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>";

// Feeds `wire` in pieces of `piece` bytes; returns the events and how many bytes were taken.
std::vector<XmppEvent> read_all(const std::string& wire, std::size_t piece, std::size_t& taken) {
  XmppReader reader;
  std::vector<XmppEvent> events;
  taken = 0;
  while (taken < wire.size()) {
    auto took = reader.take(std::string_view(wire).substr(taken, piece));
    REQUIRE(took);
    taken += *took;
    if (reader.complete()) {
      events.push_back(reader.pop());
    } else if (*took == 0) {
      break;
    }
  }
  return events;
}

}  // namespace

TEST_CASE("XMPP reader: prosody's stream, split anywhere, gives the same three events", "[fetch]") {
  for (const std::size_t piece :
       {std::size_t{1}, std::size_t{2}, std::size_t{7}, kProsody.size()}) {
    INFO("pieces of " << piece);
    std::size_t taken = 0;
    const auto events = read_all(kProsody, piece, taken);
    CHECK(taken == kProsody.size());
    REQUIRE(events.size() == 3);
    CHECK(events[0].kind == XmppEvent::Kind::stream_start);
    CHECK(events[0].version == "1.0");
    CHECK(events[1].name.is(getcert::detail::kXmppStreamsNs, "features"));
    REQUIRE(events[1].children.size() == 1);
    CHECK(events[1].children[0].is(getcert::detail::kXmppTlsNs, "starttls"));
    CHECK(events[2].name.is(getcert::detail::kXmppTlsNs, "proceed"));
  }
}

TEST_CASE("XMPP reader: stops at the end of an element, resolves namespaces, reads errors",
          "[fetch]") {
  // Nothing after </features> is taken until the event is popped: it may be TLS.
  XmppReader reader;
  const std::string wire =
      "<s:stream xmlns:s='http://etherx.jabber.org/streams' version='1.0'>"
      "<features xmlns='http://etherx.jabber.org/streams'/>\x16\x03\x01";
  auto first = reader.take(wire);
  REQUIRE(first);
  REQUIRE(reader.complete());
  CHECK(reader.pop().kind == XmppEvent::Kind::stream_start);
  auto second = reader.take(std::string_view(wire).substr(*first));
  REQUIRE(second);
  CHECK(*first + *second == wire.size() - 3);
  CHECK(reader.pop().name.is(getcert::detail::kXmppStreamsNs, "features"));

  std::size_t taken = 0;
  const auto error = read_all(
      "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"
      "<stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>"
      "<text xmlns='urn:ietf:params:xml:ns:xmpp-streams'>no &apos;x&apos; &#x41;</text>"
      "</stream:error></stream:stream>",
      5, taken);
  REQUIRE(error.size() == 3);
  CHECK(error[1].name.is(getcert::detail::kXmppStreamsNs, "error"));
  CHECK(error[1].children[0].is(getcert::detail::kXmppStreamErrorNs, "host-unknown"));
  CHECK(error[1].text == "no 'x' A");
  CHECK(error[2].kind == XmppEvent::Kind::stream_end);
}

TEST_CASE("XMPP reader: other protocols, broken XML and floods are refused", "[fetch]") {
  const auto refused = [](const std::string& wire) {
    XmppReader reader;
    auto took = reader.take(wire);
    while (took && reader.complete()) {
      reader.pop();
      took = reader.take(wire.substr(0, 0));
      break;
    }
    return took ? getcert::Errc::internal : took.error().code;
  };
  CHECK(refused("220 mail.example ESMTP\r\n") == getcert::Errc::not_tls);
  CHECK(refused("<html>") == getcert::Errc::not_tls);
  CHECK(refused("<!DOCTYPE x>") == getcert::Errc::malformed_input);
  CHECK(refused("<p:stream>") == getcert::Errc::malformed_input);  // undeclared prefix

  XmppReader reader;
  REQUIRE(reader.take("<stream:stream xmlns:stream='http://etherx.jabber.org/streams'>"));
  reader.pop();
  CHECK(reader.take("<a></b>").error().code == getcert::Errc::malformed_input);

  XmppReader flood;
  REQUIRE(flood.take("<stream xmlns='http://etherx.jabber.org/streams'>"));
  flood.pop();
  const std::string big = "<features>" + std::string(getcert::detail::kMaxXmppElement, ' ');
  const auto over = flood.take(big);
  REQUIRE_FALSE(over);
  CHECK(over.error().code == getcert::Errc::limit_exceeded);

  XmppReader deep;
  REQUIRE(deep.take("<stream xmlns='http://etherx.jabber.org/streams'>"));
  deep.pop();
  std::string nested;
  for (int i = 0; i < 40; ++i) nested += "<a>";
  CHECK(deep.take(nested).error().code == getcert::Errc::limit_exceeded);
}

TEST_CASE("MySQL greeting: MariaDB 10.11's handshake, an ERR packet, protocol 9", "[fetch]") {
  // What mariadbd 10.11 sent with --ssl-cert, after the 4-byte header.
  const std::string greeting =
      "\x0a"
      "5.5.5-10.11.19-MariaDB-0+deb12u1\x00"
      "\x03\x00\x00\x00>G)6te}f\x00\xfe\xff\x08\x02\x00\xff\x81\x15\x00\x00\x00\x00\x00\x00"
      "\x1d\x00\x00\x00"
      "fM1Kd5z+c3rd\x00mysql_native_password\x00"s;
  auto g = getcert::detail::parse_mysql_greeting(greeting);
  REQUIRE(g);
  CHECK_FALSE(g->refused);
  CHECK(g->server_version == "5.5.5-10.11.19-MariaDB-0+deb12u1");
  CHECK((g->capabilities & getcert::detail::kMysqlSsl) != 0);
  CHECK((g->capabilities & getcert::detail::kMysqlProtocol41) != 0);
  CHECK(g->charset == 8);

  const std::string request = getcert::detail::mysql_ssl_request(*g);
  REQUIRE(request.size() == 36);
  CHECK(request.substr(0, 4) == "\x20\x00\x00\x01"s);  // 32 bytes, sequence 1
  const auto caps = static_cast<unsigned char>(request[4]) |
                    (static_cast<unsigned>(static_cast<unsigned char>(request[5])) << 8U);
  CHECK((caps & getcert::detail::kMysqlSsl) != 0);
  CHECK((caps & getcert::detail::kMysqlProtocol41) != 0);
  CHECK(request.substr(8, 4) == "\x00\x00\x00\x01"s);  // 16 MiB
  CHECK(request[12] == 8);                             // the server's own character set
  CHECK(request.substr(13) == std::string(23, '\0'));

  auto err = getcert::detail::parse_mysql_greeting("\xff\x10\x04#08004Too many connections"s);
  REQUIRE(err);
  CHECK(err->refused);
  CHECK(err->error_code == 1040);
  CHECK(err->error_message == "Too many connections");

  CHECK(getcert::detail::parse_mysql_greeting("\x09"
                                              "3.20\x00"s)
            .error()
            .code == getcert::Errc::unsupported);
  CHECK_FALSE(
      getcert::detail::parse_mysql_greeting("\x0a"
                                            "8.0"s));  // no NUL
  CHECK_FALSE(
      getcert::detail::parse_mysql_greeting("\x0a"
                                            "8.0\x00\x01\x02"s));  // no flags
  CHECK_FALSE(getcert::detail::parse_mysql_greeting(""));
}

TEST_CASE("TDS PRELOGIN: the request's layout, answers parsed, malformed ones refused", "[fetch]") {
  namespace d = getcert::detail;
  const std::string request = d::tds_prelogin_request();
  // Header: PRELOGIN, end of message, length 47, SPID 0, packet 1, window 0.
  CHECK(request.substr(0, 8) == "\x12\x01\x00\x2f\x00\x00\x01\x00"s);
  // Five options (5 bytes each) and the terminator, then their data from offset 26.
  CHECK(request.substr(8, 5) == "\x00\x00\x1a\x00\x06"s);   // VERSION at 26, 6 bytes
  CHECK(request.substr(13, 5) == "\x01\x00\x20\x00\x01"s);  // ENCRYPTION at 32, 1 byte
  CHECK(request[8 + 25] == '\xff');
  auto own = d::parse_prelogin(request.substr(8));
  REQUIRE(own);
  CHECK(own->encryption == d::kTdsEncryptOn);

  // A SQL Server 2019 style answer: VERSION 15.0.2000.5, ENCRYPTION OFF, INSTOPT, THREADID
  // (empty), MARS.
  const std::string answer =
      "\x00\x00\x1a\x00\x06\x01\x00\x20\x00\x01\x02\x00\x21\x00\x01\x03\x00\x22\x00\x00"
      "\x04\x00\x22\x00\x01\xff"
      "\x0f\x00\x07\xd0\x05\x00"
      "\x00\x00\x00"s;
  auto parsed = d::parse_prelogin(answer);
  REQUIRE(parsed);
  CHECK(parsed->encryption == d::kTdsEncryptOff);
  REQUIRE(parsed->version);
  CHECK(d::tds_version_text(*parsed->version) == "15.0.2000.5");

  CHECK_FALSE(d::parse_prelogin("\x01\x00\x06\x00\x01"s));              // no terminator
  CHECK_FALSE(d::parse_prelogin("\x01\x00\x40\x00\x01\xff"s));          // outside
  CHECK_FALSE(d::parse_prelogin("\x01\x00\x06\x00\x02\xff\x00\x00"s));  // 2-byte ENCRYPTION
  CHECK_FALSE(d::parse_prelogin("\x01\x00\x0b\x00\x01\x01\x00\x0b\x00\x01\xff\x00"s));  // twice

  CHECK(d::tds_encryption_name(2) == "ENCRYPT_NOT_SUP (0x02)");
  CHECK(d::tds_encryption_name(0x81) == "ENCRYPT_ON with ENCRYPT_CLIENT_CERT (0x81)");
  CHECK(d::tds_encryption_name(7) == "0x07 (unknown)");
  CHECK_FALSE(d::parse_tds_header("\x04\x01\x00\x07\x00\x00\x01\x00"s));  // length below 8
}

TEST_CASE("TDS framing: what TLS writes leaves as one PRELOGIN message per flush", "[fetch]") {
  namespace d = getcert::detail;
  BIO* sink = BIO_new(BIO_s_mem());
  REQUIRE(sink != nullptr);
  BIO* framing = d::push_tds_framing(sink);
  REQUIRE(framing != nullptr);
  const std::string flight(5000, 'x');
  std::size_t written = 0;
  REQUIRE(BIO_write_ex(framing, flight.data(), 3000, &written) == 1);
  REQUIRE(BIO_write_ex(framing, flight.data() + 3000, 2000, &written) == 1);
  CHECK(BIO_ctrl_pending(sink) == 0);  // nothing leaves before the flush
  REQUIRE(BIO_ctrl(framing, BIO_CTRL_FLUSH, 0, nullptr) == 1);
  std::string wire(BIO_ctrl_pending(sink), '\0');
  REQUIRE(BIO_read(sink, wire.data(), static_cast<int>(wire.size())) ==
          static_cast<int>(wire.size()));
  // 5000 bytes: a full 4096-byte packet (not last), then 912 + 8 with end-of-message.
  REQUIRE(wire.size() == 5000 + 16);
  CHECK(wire.substr(0, 8) == "\x12\x00\x10\x00\x00\x00\x01\x00"s);
  CHECK(wire.substr(4096, 8) == "\x12\x01\x03\x98\x00\x00\x02\x00"s);

  // After the handshake, bytes pass bare.
  d::end_tds_framing(framing);
  REQUIRE(BIO_write_ex(framing, "abc", 3, &written) == 1);
  std::string bare(3, '\0');
  REQUIRE(BIO_read(sink, bare.data(), 3) == 3);
  CHECK(bare == "abc");
  BIO_free_all(framing);
}
