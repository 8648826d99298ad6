// --proxy: getcert reaches the server through a real HTTP CONNECT proxy (a small Python relay)
// and through Dante's SOCKS5 server; the chain is the same as direct, the request carries the
// target and credentials, and a proxy that refuses or is down gives a one-line network error
// that quotes the proxy's reason and never shows the password. Scripted SOCKS peers stand in
// for proxies that break the protocol.

#include <netdb.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/local_server.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using namespace getcert::test;  // exit codes, explain(), files, servers

namespace {

using Proxy = getcert::test::LocalServer;

Proxy start_proxy(const std::string& log, const std::string& deny = {}) {
  return getcert::test::start_local_server(
      [&](std::uint16_t port) {
        std::vector<std::string> argv{"python3", GETCERT_CONNECT_PROXY, std::to_string(port), log};
        if (!deny.empty()) {
          argv.emplace_back("--deny");
          argv.push_back(deny);
        }
        return argv;
      },
      "the CONNECT proxy");
}

std::string proxy_url(const Proxy& p, const std::string& credentials = {}) {
  return "http://" + (credentials.empty() ? "" : credentials + "@") +
         "127.0.0.1:" + std::to_string(p.port);
}

}  // namespace

TEST_CASE("proxy: the chain through a CONNECT proxy equals the chain fetched directly",
          "[fetch][cli]") {
  if (!have_openssl()) {
    GETCERT_SKIP("openssl is not installed");
  }
  TempDir tmp;
  const auto server = start_openssl_server(pki_chain("rsa"));
  auto proxy = start_proxy(tmp / "requests.log");
  const std::string target = "localhost:" + std::to_string(server.port());
  const auto direct = run_getcert({target, "--ca-file", pki("root.pem")});
  const auto proxied = run_getcert(
      {target, "--ca-file", pki("root.pem"), "--proxy", proxy_url(proxy, "alice:s3cr3t")});
  INFO(explain(proxied));
  REQUIRE(direct.exit_code == kExitOk);
  CHECK(proxied.exit_code == kExitOk);
  CHECK(proxied.out == direct.out);
  const std::string log = read_file(tmp / "requests.log");
  CHECK_THAT(log, Contains("CONNECT " + target + " HTTP/1.1\r\n"));
  CHECK_THAT(log, Contains("Proxy-Authorization: Basic YWxpY2U6czNjcjN0\r\n"));  // alice:s3cr3t
}

TEST_CASE("proxy: a proxy that refuses is a network error quoting its answer, no password",
          "[fetch][cli]") {
  TempDir tmp;
  auto proxy = start_proxy(tmp / "requests.log", "407 Proxy Authentication Required");
  const auto r = run_getcert(
      {"localhost:443", "--proxy", proxy_url(proxy, "bob:hunter2"), "--ca-file", pki("root.pem")});
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("refused to connect to localhost:443") && Contains("407") &&
                        Contains("credentials"));
  CHECK(r.err.find("hunter2") == std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("proxy: a proxy that is down, or a bad proxy URL", "[fetch][cli]") {
  const auto down = run_getcert(
      {"localhost:443", "--proxy", "http://127.0.0.1:" + std::to_string(closed_port())});
  CHECK(down.exit_code == kExitNetwork);
  CHECK_THAT(down.err, Contains("proxy 127.0.0.1:") && Contains("Connection refused"));

  const auto bad = run_getcert({"localhost:443", "--proxy", "socks4://127.0.0.1:1080"});
  CHECK(bad.exit_code == kExitUsage);
  CHECK_THAT(bad.err, Contains("--proxy takes http://, socks5:// or socks5h://"));
}

namespace {

std::string socks_url(const TlsServer& dante, const std::string& scheme = "socks5",
                      const std::string& credentials = {}) {
  return scheme + "://" + (credentials.empty() ? "" : credentials + "@") +
         "127.0.0.1:" + std::to_string(dante.port());
}

// The system account Dante checks RFC 1929 credentials against (it has no user list of its
// own). Created when missing; needs root, as Dante does to read the password database.
constexpr const char* kSocksUser = "getcert-socks";
constexpr const char* kSocksPassword = "Socks5-test-pw";

bool ensure_socks_account() {
  const auto exists = run({"id", kSocksUser});
  if (exists.exit_code != 0 &&
      run({"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", kSocksUser})
              .exit_code != 0) {
    return false;
  }
  return run_shell(std::string("echo '") + kSocksUser + ":" + kSocksPassword + "' | chpasswd")
             .exit_code == 0;
}

}  // namespace

TEST_CASE("socks5: the chain through Dante equals the chain fetched directly", "[fetch][cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_danted(), "danted (dante-server)");
  const auto server = start_openssl_server(pki_chain("rsa"));
  const auto dante = start_danted({});
  const std::string target = "localhost:" + std::to_string(server.port());
  const auto direct = run_getcert({target, "--ca-file", pki("root.pem")});
  REQUIRE(direct.exit_code == kExitOk);
  for (const std::string scheme : {"socks5", "socks5h"}) {
    INFO(scheme);
    const auto via = run_getcert(
        {target, "--ca-file", pki("root.pem"), "--proxy", socks_url(dante, scheme), "-o", "json"});
    INFO(explain(via) << "\ndanted:\n" << dante.log());
    REQUIRE(via.exit_code == kExitOk);
    const auto j = parse_json(via.out);
    CHECK(j["target"]["address"] == "127.0.0.1");
    CHECK(j["verification"]["ok"] == true);
    const auto pem =
        run_getcert({target, "--ca-file", pki("root.pem"), "--proxy", socks_url(dante, scheme)});
    CHECK(pem.out == direct.out);
  }
}

TEST_CASE("socks5: Dante's refusals are network errors naming its reason", "[fetch][cli]") {
  REQUIRE_TOOL(have_danted(), "danted (dante-server)");
  const std::uint16_t closed = closed_port();
  const std::uint16_t blocked = closed_port();
  DanteOptions options;
  options.blocked_port = blocked;
  const auto dante = start_danted(options);
  const auto ruled =
      run_getcert({"localhost:" + std::to_string(blocked), "--proxy", socks_url(dante, "socks5h")});
  INFO(explain(ruled));
  CHECK(ruled.exit_code == kExitNetwork);
  CHECK(ruled.out.empty());
  CHECK_THAT(ruled.err, Contains("refused to connect to localhost:" + std::to_string(blocked)) &&
                            Contains("connection not allowed by ruleset"));

  const auto refused =
      run_getcert({"127.0.0.1:" + std::to_string(closed), "--proxy", socks_url(dante)});
  INFO(explain(refused));
  CHECK(refused.exit_code == kExitNetwork);
  CHECK_THAT(refused.err, Contains("connection refused"));

  // Credentials to a proxy that wants none: it offers no method getcert can use.
  const auto unwanted = run_getcert({"127.0.0.1:" + std::to_string(closed), "--proxy",
                                     socks_url(dante, "socks5", "someone:secret-pw")});
  INFO(explain(unwanted));
  CHECK(unwanted.exit_code == kExitNetwork);
  CHECK_THAT(unwanted.err, Contains("accepts none of the authentication methods"));
  CHECK_THAT(unwanted.err, !Contains("secret-pw"));
}

TEST_CASE("socks5: username and password authentication with Dante (needs root)", "[fetch][cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_danted(), "danted (dante-server)");
  if (::geteuid() != 0) {
    GETCERT_SKIP("needs root: Dante checks SOCKS passwords against a system account");
  }
  REQUIRE(ensure_socks_account());
  const auto server = start_openssl_server(pki_chain("rsa"));
  DanteOptions options;
  options.username_auth = true;
  const auto dante = start_danted(options);
  const std::string target = "localhost:" + std::to_string(server.port());

  const auto ok =
      run_getcert({target, "--ca-file", pki("root.pem"), "--proxy",
                   socks_url(dante, "socks5", std::string(kSocksUser) + ":" + kSocksPassword)});
  INFO(explain(ok) << "\ndanted:\n" << dante.log());
  CHECK(ok.exit_code == kExitOk);

  const auto wrong =
      run_getcert({target, "--proxy",
                   socks_url(dante, "socks5h", std::string(kSocksUser) + ":not-the-password")});
  INFO(explain(wrong));
  CHECK(wrong.exit_code == kExitNetwork);
  CHECK_THAT(wrong.err, Contains("rejected the username and password"));
  CHECK_THAT(wrong.err, !Contains("not-the-password"));

  const auto none = run_getcert({target, "--proxy", socks_url(dante)});
  INFO(explain(none));
  CHECK(none.exit_code == kExitNetwork);
  CHECK_THAT(none.err, Contains("does it want a username and password"));
}

TEST_CASE("socks5: AIA downloads go through the proxy too", "[fetch][cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  REQUIRE_TOOL(have_danted(), "danted (dante-server)");
  // The leaf's AIA URL is http://127.0.0.1:18080/intermediate.der: Dante's log must show the
  // download relayed to it, whether or not anything answers there.
  const auto server = start_openssl_server(pki_leaf_only("ecdsa"));
  const auto dante = start_danted({});
  const auto r = run_getcert({"localhost:" + std::to_string(server.port()), "--ca-file",
                              pki("root.pem"), "--proxy", socks_url(dante), "-o", "json"});
  INFO(explain(r) << "\ndanted:\n" << dante.log());
  CHECK(r.exit_code != kExitNetwork);
  CHECK_THAT(dante.log(), Contains("127.0.0.1.18080"));
}

TEST_CASE("socks5: scripted proxies that refuse or break the protocol", "[fetch][cli]") {
  using Kind = HostilePeer::Step::Kind;
  using namespace std::string_literals;
  struct Case {
    std::string name;
    std::string credentials;
    HostilePeer::Script script;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"an HTTP proxy",
       "",
       {{Kind::read_until, "\x05\x01\x00"s, {}},
        {Kind::send, "HTTP/1.1 400 Bad Request\r\n\r\n", {}}},
       "does not speak SOCKS5"},
      {"bad credentials",
       "user:pw",
       {{Kind::read_until, "\x05\x01\x02"s, {}},
        {Kind::send, "\x05\x02"s, {}},
        {Kind::read_until, "\x04user\x02pw"s, {}},
        {Kind::send, "\x01\x01"s, {}}},
       "rejected the username and password"},
      {"a rule, with a domain-name bound address",
       "",
       {{Kind::read_until, "\x05\x01\x00"s, {}},
        {Kind::send, "\x05\x00"s, {}},
        {Kind::read_until,
         "\x03\x0c"
         "example.test\x01\xbb"s,
         {}},
        {Kind::send, "\x05\x02\x00\x03\x04host\x00\x00"s, {}}},
       "refused to connect to example.test:443: connection not allowed by ruleset"},
      {"a proxy that hangs up", "", {{Kind::read_until, "\x05\x01\x00"s, {}}}, "proxy 127.0.0.1:"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer peer(c.script);
    const std::string url = "socks5h://" + (c.credentials.empty() ? "" : c.credentials + "@") +
                            "127.0.0.1:" + std::to_string(peer.port());
    const auto r = run_getcert({"example.test:443", "--proxy", url, "--timeout", "5s"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains(c.expected));
  }
}

TEST_CASE("socks5: every address of the target is offered to the proxy in turn", "[fetch][cli]") {
  using Kind = HostilePeer::Step::Kind;
  using namespace std::string_literals;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo("localhost", "443", &hints, &found) != 0)
    GETCERT_SKIP("localhost does not resolve");
  int count = 0;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) ++count;
  freeaddrinfo(found);
  // Where /etc/hosts gives localhost one address, getcert runs in a private mount namespace
  // whose /etc/hosts gives it both (root only, as in CI); the machine's file is untouched.
  const bool private_hosts = count < 2;
  if (private_hosts && ::geteuid() != 0) {
    GETCERT_SKIP("localhost resolves to one address here and only root can give it two");
  }
  // A proxy that cannot reach any of them: each connection ends in "host unreachable".
  HostilePeer peer(
      HostilePeer::Script{{Kind::read_until, "\x05\x01\x00"s, {}},
                          {Kind::send, "\x05\x00"s, {}},
                          {Kind::read_until, "\x01\xbb"s, {}},
                          {Kind::send, "\x05\x04\x00\x01\x00\x00\x00\x00\x00\x00"s, {}}});
  const std::string proxy = "socks5://127.0.0.1:" + std::to_string(peer.port());
  RunResult r;
  if (private_hosts) {
    TempDir tmp;
    const std::string hosts = tmp / "hosts";
    write_file(hosts, "127.0.0.1 localhost\n::1 localhost\n");
    r = run({"unshare", "-m", "sh", "-c", "mount --bind \"$1\" /etc/hosts && shift && exec \"$@\"",
             "sh", hosts, GETCERT_BINARY, "localhost:443", "--proxy", proxy});
  } else {
    r = run_getcert({"localhost:443", "--proxy", proxy});
  }
  INFO(explain(r));
  CHECK(r.exit_code == kExitNetwork);
  CHECK_THAT(r.err, Contains("refused to connect to every address of localhost:443") &&
                        Contains("127.0.0.1: host unreachable") &&
                        Contains("::1: host unreachable"));
}
