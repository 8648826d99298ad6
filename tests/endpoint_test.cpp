// parse_endpoint: every target form a user types, the rejections (with a message that names
// the problem), and that a bad target stops the CLI before any packet is sent.

#include <catch2/catch.hpp>

#include <string>

#include "getcert/endpoint.hpp"
#include "support/commands.hpp"
#include "support/hostile_peer.hpp"

using Catch::Matchers::Contains;
using getcert::Endpoint;
using getcert::Errc;
using getcert::parse_endpoint;

namespace {

Endpoint parsed(const std::string& text) {
  auto ep = parse_endpoint(text);
  INFO("target: " << text);
  if (!ep) FAIL("rejected: " << ep.error().message);
  return *ep;
}

}  // namespace

TEST_CASE("accepted target forms", "[endpoint]") {
  struct Case {
    const char* text;
    const char* host;
    std::uint16_t port;
    bool is_ip;
  };
  const Case cases[] = {
      {"example.com", "example.com", 443, false},
      {"example.com:8443", "example.com", 8443, false},
      {"https://example.com:8443/path", "example.com", 8443, false},
      {"https://example.com/some/path?q=1#frag", "example.com", 443, false},
      {"https://example.com", "example.com", 443, false},
      {"https://user:secret@example.com:444/", "example.com", 444, false},
      {"HTTPS://Example.COM", "example.com", 443, false},
      {"wss://ws.example.com/socket", "ws.example.com", 443, false},
      {"ldaps://dir.example.com", "dir.example.com", 636, false},
      {"imaps://mail.example.com", "mail.example.com", 993, false},
      {"smtps://mail.example.com", "mail.example.com", 465, false},
      {"[::1]:8443", "::1", 8443, true},
      {"[::1]", "::1", 443, true},
      {"::1", "::1", 443, true},
      {"2001:db8::42", "2001:db8::42", 443, true},
      {"https://[::1]:8443/x", "::1", 8443, true},
      {"127.0.0.1", "127.0.0.1", 443, true},
      {"127.0.0.1:8443", "127.0.0.1", 8443, true},
      {"localhost", "localhost", 443, false},
      {"example.com.", "example.com", 443, false},
      {"example.com.:8443", "example.com", 8443, false},
      {"grpc_internal.svc:50051", "grpc_internal.svc", 50051, false},
      {"host:1", "host", 1, false},
      {"host:65535", "host", 65535, false},
  };
  for (const auto& c : cases) {
    INFO("target: " << c.text);
    const Endpoint ep = parsed(c.text);
    CHECK(ep.host == c.host);
    CHECK(ep.port == c.port);
    CHECK(ep.is_ip == c.is_ip);
  }
}

TEST_CASE("host alone takes the caller's default port", "[endpoint]") {
  auto ep = parse_endpoint("example.com", 8443);
  REQUIRE(ep);
  CHECK(ep->port == 8443);
  auto explicit_port = parse_endpoint("example.com:9000", 8443);
  REQUIRE(explicit_port);
  CHECK(explicit_port->port == 9000);
}

TEST_CASE("to_string brackets IPv6 literals", "[endpoint]") {
  CHECK(parsed("[::1]:8443").to_string() == "[::1]:8443");
  CHECK(parsed("::1").to_string() == "[::1]:443");
  CHECK(parsed("https://Example.com/x").to_string() == "example.com:443");
  CHECK(parsed("127.0.0.1:10").to_string() == "127.0.0.1:10");
}

TEST_CASE("rejected targets name the problem", "[endpoint]") {
  struct Case {
    const char* text;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "empty"},
      {"host:0", "out of range 1-65535"},
      {"host:70000", "port 70000 is out of range 1-65535"},
      {"host:65536", "out of range"},
      {"host:abc", "invalid port 'abc'"},
      {"host:", "invalid port"},
      {"host:-1", "invalid port"},
      {"host:44x", "invalid port"},
      {"ftp://example.com", "unsupported URL scheme 'ftp://'"},
      {"http://example.com", "unsupported URL scheme 'http://'"},
      {"gopher://example.com:70/", "unsupported URL scheme"},
      {"[::1", "missing ']'"},
      {"[::1]x", "after ']'"},
      {"[::1]:", "invalid port"},
      {"[::1]:99999", "out of range"},
      {"[127.0.0.1]:443", "not an IPv6 address"},
      {"[example.com]:443", "not an IPv6 address"},
      {"bad::target", "not a valid IPv6 address"},
      {"1:2:3", "not a valid IPv6 address"},
      {"exa mple.com", "whitespace"},
      {"example.com\n", "whitespace"},
      {"!!!", "not a valid host name"},
      {"host/path", "not a valid host name"},
      {"a..b", "not a valid host name"},
      {".", "not a valid host name"},
      {":443", "no host"},
      {"https://", "no host"},
      {"https:///path", "no host"},
  };
  for (const auto& c : cases) {
    INFO("target: '" << c.text << "'");
    auto ep = parse_endpoint(c.text);
    REQUIRE_FALSE(ep);
    CHECK(ep.error().code == Errc::invalid_argument);
    CHECK_THAT(ep.error().message, Contains(c.message_part));
  }
}

TEST_CASE("over-long names and labels are rejected", "[endpoint]") {
  const std::string label63(63, 'a');
  CHECK(parse_endpoint(label63 + ".example"));
  CHECK_FALSE(parse_endpoint(std::string(64, 'a') + ".example"));
  std::string long_name;
  while (long_name.size() < 254) long_name += "abcdefghi.";
  long_name += "x";
  CHECK_FALSE(parse_endpoint(long_name));
}

TEST_CASE("is_ip_literal", "[endpoint]") {
  CHECK(getcert::is_ip_literal("127.0.0.1"));
  CHECK(getcert::is_ip_literal("::1"));
  CHECK(getcert::is_ip_literal("2001:db8::1"));
  CHECK_FALSE(getcert::is_ip_literal("[::1]"));
  CHECK_FALSE(getcert::is_ip_literal("1.2.3"));
  CHECK_FALSE(getcert::is_ip_literal("256.1.1.1"));
  CHECK_FALSE(getcert::is_ip_literal("example.com"));
  CHECK_FALSE(getcert::is_ip_literal(""));
}

TEST_CASE("a bad target makes the CLI exit 2 before any connection is made", "[endpoint][cli]") {
  using getcert::test::HostilePeer;
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  const std::string good = "127.0.0.1:" + std::to_string(peer.port());

  SECTION("the good target first, then the bad one") {
    const auto r = getcert::test::run_getcert({good, "bad::target", "--timeout", "5s"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("bad::target"));
    CHECK(peer.connections_settled() == 0);
  }
  SECTION("a bad port among good targets") {
    const auto r = getcert::test::run_getcert({good, good, "127.0.0.1:70000"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("70000"));
    CHECK(peer.connections_settled() == 0);
  }
  SECTION("control: the good target alone is dialed (so the counter works)") {
    const auto r = getcert::test::run_getcert({good, "--timeout", "5s"});
    CHECK(r.exit_code == 4);
    CHECK(peer.connections_settled() == 1);
  }
}

TEST_CASE("a Unicode name that maps to nothing is rejected, not an empty host", "[endpoint]") {
  // U+034F (combining grapheme joiner) is removed by IDNA mapping; found by fuzz_endpoint.
  for (const std::string text : {"\xcd\x8f", "\xcd\x8f:443", "https://\xcd\x8f/"}) {
    INFO(text);
    auto ep = parse_endpoint(text);
    REQUIRE_FALSE(ep);
    CHECK(ep.error().code == Errc::invalid_argument);
  }
  // A name that keeps a label after mapping still parses, as its A-label.
  CHECK(parsed("b\xcd\x8f\xc3\xbc"
               "cher.example")
            .host == "xn--bcher-kva.example");
}
