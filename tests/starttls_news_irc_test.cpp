// STARTTLS for NNTP (RFC 4642) and IRC (the IRCv3 tls extension) against test servers that
// follow the RFCs (tests/servers/nntp_server.py, irc_server.py: inn2 does not install on a host
// whose name does not resolve, and no Debian IRC server speaks STARTTLS), with
// `openssl s_client -starttls nntp|irc` as the oracle; and the default port of every
// --starttls protocol.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/local_server.hpp"
#include "support/net.hpp"
#include "support/process.hpp"

namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using getcert::test::HostilePeer;
using getcert::test::kExitNetwork;
using getcert::test::kExitOk;
using getcert::test::kExitTls;
using getcert::test::pki;
using getcert::test::run_getcert;
using Kind = HostilePeer::Step::Kind;

// tests/servers/SCRIPT in MODE on a free port.
getcert::test::LocalServer start(const std::string& script, const std::string& mode) {
  return getcert::test::start_local_server(
      [&](std::uint16_t port) -> std::vector<std::string> {
        return {"python3",
                std::string(GETCERT_TEST_SERVERS) + "/" + script,
                std::to_string(port),
                pki("rsa-chain.pem"),
                pki("rsa.key"),
                mode};
      },
      "tests/servers/" + script);
}

std::string oracle_chain(const char* protocol, std::uint16_t port) {
  return getcert::test::certificate_blocks(
      getcert::test::openssl({"s_client", "-starttls", protocol, "-connect",
                              "127.0.0.1:" + std::to_string(port), "-showcerts"}));
}

getcert::test::RunResult fetch(const char* protocol, std::uint16_t port,
                               const std::string& timeout = "10s") {
  return run_getcert({"--starttls", protocol, "--timeout", timeout,
                      "localhost:" + std::to_string(port), "--ca-file", pki("root.pem")},
                     20s);
}

// The one line getcert prints for an error of the target on `port`.
std::string error_line(std::uint16_t port, const std::string& message) {
  return "getcert: error: localhost:" + std::to_string(port) + ": " + message + "\n";
}

// ... for a refusal.
std::string refusal(const char* server, const std::string& quoted) {
  return std::string(server) + " did not accept the switch to TLS (it answered " + quoted + ")";
}

// tests/servers/SCRIPT in each of MODES upgrades: getcert prints what the oracle printed.
void check_chain(const char* script, const char* protocol, const std::vector<std::string>& modes,
                 const std::string& oracle) {
  for (const auto& mode : modes) {
    INFO("mode " << mode);
    auto s = start(script, mode);
    const auto r = fetch(protocol, s.port);
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK(r.out == oracle);
    CHECK(r.err.empty());
  }
}

struct Refusal {
  const char* mode;
  std::string err;  // the message of getcert's error line
};

// tests/servers/SCRIPT in each case's mode refuses: a TLS error with the case's message.
void check_refusals(const char* script, const char* protocol, const std::vector<Refusal>& cases) {
  for (const auto& c : cases) {
    INFO("mode " << c.mode);
    auto s = start(script, c.mode);
    const auto r = fetch(protocol, s.port);
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == kExitTls);
    CHECK(r.out.empty());
    CHECK(r.err == error_line(s.port, c.err));
  }
}

}  // namespace

TEST_CASE("STARTTLS: NNTP gives the chain openssl s_client -starttls nntp sees", "[fetch][cli]") {
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  auto server = start("nntp_server.py", "reader");
  const std::string oracle = oracle_chain("nntp", server.port);
  CHECK(oracle == expected);
  // A reading server; a mode-switching one that offers STARTTLS only after MODE READER; and one
  // that predates CAPABILITIES but knows STARTTLS.
  check_chain("nntp_server.py", "nntp", {"reader", "mode-switch", "legacy"}, oracle);
}

TEST_CASE("STARTTLS: NNTP refusals are TLS errors quoting the server", "[fetch][cli]") {
  check_refusals(
      "nntp_server.py", "nntp",
      {
          {"refuse", refusal("NNTP server", R"("580 Can not initiate TLS negotiation")")},
          {"unavailable",
           refusal("NNTP server", R"("400 news.getcert.test service temporarily unavailable")")},
          {"no-starttls",
           "NNTP server does not offer STARTTLS (its capabilities: \"VERSION IMPLEMENTATION READER "
           "POST LIST OVER HDR AUTHINFO\")"},
      });
}

TEST_CASE("STARTTLS: IRC gives the chain openssl s_client -starttls irc sees", "[fetch][cli]") {
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  // s_client gives up at the first line that is not a numeric, so its server sends none.
  auto plain = start("irc_server.py", "plain");
  const std::string oracle = oracle_chain("irc", plain.port);
  CHECK(oracle == expected);
  // "chatty" sends NOTICEs, and a PING that must be answered before its 670.
  check_chain("irc_server.py", "irc", {"plain", "chatty"}, oracle);
}

TEST_CASE("STARTTLS: IRC refusals (691, unknown command) are TLS errors quoting the server",
          "[fetch][cli]") {
  check_refusals(
      "irc_server.py", "irc",
      {
          {"refuse", refusal("IRC server",
                             R"x(":irc.getcert.test 691 * :STARTTLS failed (Wrong moon phase)")x")},
          {"unknown",
           refusal("IRC server", R"x(":irc.getcert.test 421 * STARTTLS :Unknown command")x")},
      });
}

TEST_CASE("STARTTLS: NNTP and IRC servers that stall after greeting time out", "[fetch][cli]") {
  for (const auto& [protocol, script] :
       {std::pair{"nntp", "nntp_server.py"}, std::pair{"irc", "irc_server.py"}}) {
    INFO(protocol);
    auto s = start(script, "stall");
    const auto r = fetch(protocol, s.port, "1s");
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("did not answer the STARTTLS exchange in time"));
    CHECK(r.elapsed < 2500ms);
  }
}

TEST_CASE("STARTTLS: an IRC server that chatters past 100 lines is cut off", "[fetch][cli]") {
  HostilePeer peer({{Kind::read_until, "\n", 0ms},
                    {Kind::flood, ":irc.test NOTICE * :*** still looking\r\n", 0ms}});
  const auto r = fetch("irc", peer.port());
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(r.err == error_line(peer.port(),
                            "IRC server sent more than 100 lines before answering during the "
                            "STARTTLS exchange"));
}

namespace {

// True when something accepts TCP connections on 127.0.0.1:port.
bool listening(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("STARTTLS: a target without a port takes the protocol's default port", "[cli]") {
  // Issue #12's list, and the ports the protocols had before it.
  const std::vector<std::pair<std::string, int>> ports{
      {"smtp", 25},  {"imap", 143}, {"pop3", 110}, {"ftp", 21},     {"postgres", 5432},
      {"ldap", 389}, {"lmtp", 24},  {"nntp", 119}, {"sieve", 4190}, {"irc", 6667}};
  for (const auto& [protocol, port] : ports) {
    INFO(protocol);
    // Nothing should listen there, so the error names the port getcert dialed.
    if (listening(static_cast<std::uint16_t>(port))) {
      GETCERT_SKIP("something listens on 127.0.0.1:" << port);
    }
    const auto r = run_getcert({"--starttls", protocol, "127.0.0.1", "--timeout", "5s"});
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK_THAT(r.err, Contains("cannot connect to 127.0.0.1:" + std::to_string(port) + " "));
  }
}
