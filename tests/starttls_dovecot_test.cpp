// STARTTLS for LMTP and ManageSieve against Dovecot (dovecot-lmtpd, dovecot-managesieved),
// started by the test with its own configuration in a temp dir on free loopback ports, with
// `openssl s_client -starttls lmtp|sieve` as the oracle for the chain. Answers Dovecot does not
// give (a NO to STARTTLS, a BYE greeting, a stall) come from scripted peers.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
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
using getcert::test::Process;
using getcert::test::run_getcert;
using Kind = HostilePeer::Step::Kind;

constexpr const char* kDovecot = "/usr/sbin/dovecot";  // Debian's dovecot-core

// Why Dovecot cannot run here, or "" when it can: it needs its LMTP and ManageSieve parts, and
// root (its master drops to default_internal_user and chroots the login processes).
std::string dovecot_missing() {
  if (::access(kDovecot, X_OK) != 0) return "dovecot (dovecot-core) is not installed";
  if (::access("/usr/lib/dovecot/lmtp", X_OK) != 0) return "dovecot-lmtpd is not installed";
  if (::access("/usr/lib/dovecot/managesieve-login", X_OK) != 0) {
    return "dovecot-managesieved is not installed";
  }
  if (::geteuid() != 0) return "dovecot needs root to start (CI runs as root)";
  return {};
}

struct Dovecot {
  std::unique_ptr<getcert::test::TempDir> dir;
  Process process;
  std::uint16_t lmtp_port = 0;
  std::uint16_t sieve_port = 0;
};

// Dovecot in the foreground, serving LMTP and ManageSieve on 127.0.0.1; `with_tls`: with the
// test PKI's RSA chain (else "ssl = no", and it offers no STARTTLS).
Dovecot start_dovecot(bool with_tls) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto dir = std::make_unique<getcert::test::TempDir>();
    const std::uint16_t lmtp = getcert::test::free_port();
    const std::uint16_t sieve = getcert::test::free_port();
    if (lmtp == sieve) continue;
    std::string conf = "base_dir = " + (*dir / "run") + "\nstate_dir = " + (*dir / "state") +
                       "\nlog_path = /dev/stderr\n"
                       "protocols = lmtp sieve\nlisten = 127.0.0.1\n"
                       // Unprivileged processes run as nobody; no system account is made.
                       "default_internal_user = nobody\ndefault_internal_group = nogroup\n"
                       "default_login_user = nobody\n"
                       "passdb {\n  driver = static\n  args = nopassword=y\n}\n"
                       "userdb {\n  driver = static\n  args = uid=nobody gid=nogroup home=" +
                       (*dir / "home") + "/%u\n}\n";
    conf += with_tls ? "ssl = yes\nssl_cert = <" + pki("rsa-chain.pem") + "\nssl_key = <" +
                           pki("rsa.key") + "\n"
                     : std::string("ssl = no\n");
    conf += "service lmtp {\n  inet_listener lmtp {\n    address = 127.0.0.1\n    port = " +
            std::to_string(lmtp) +
            "\n  }\n}\n"
            "service managesieve-login {\n  inet_listener sieve {\n    address = 127.0.0.1\n"
            "    port = " +
            std::to_string(sieve) + "\n  }\n}\n";
    getcert::test::write_file(*dir / "dovecot.conf", conf);
    getcert::test::SpawnOptions options;
    options.die_with_parent = true;
    options.own_process_group = true;  // the master forks auth, lmtp and login processes
    Process p = Process::spawn({kDovecot, "-F", "-c", *dir / "dovecot.conf"}, options);
    if (getcert::test::wait_for_port("127.0.0.1", lmtp, 10s, &p) &&
        getcert::test::wait_for_port("127.0.0.1", sieve, 10s, &p)) {
      return {std::move(dir), std::move(p), lmtp, sieve};
    }
  }
  FAIL("dovecot did not start");
  throw std::logic_error("unreachable");
}

std::string oracle_chain(const char* protocol, std::uint16_t port) {
  return getcert::test::certificate_blocks(
      getcert::test::openssl({"s_client", "-starttls", protocol, "-connect",
                              "127.0.0.1:" + std::to_string(port), "-showcerts"}));
}

std::string target(std::uint16_t port) { return "localhost:" + std::to_string(port); }

}  // namespace

TEST_CASE("STARTTLS: LMTP and ManageSieve with dovecot give the chain openssl s_client sees",
          "[fetch][cli]") {
  if (const auto why = dovecot_missing(); !why.empty()) GETCERT_SKIP(why);
  const auto dovecot = start_dovecot(/*with_tls=*/true);
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  for (const auto& [protocol, port] :
       {std::pair{"lmtp", dovecot.lmtp_port}, std::pair{"sieve", dovecot.sieve_port}}) {
    INFO("protocol " << protocol);
    const std::string oracle = oracle_chain(protocol, port);
    CHECK(oracle == expected);
    const auto r =
        run_getcert({"--starttls", protocol, target(port), "--ca-file", pki("root.pem")});
    INFO(getcert::test::explain(r) << "\ndovecot:\n" << dovecot.process.stderr_text());
    CHECK(r.exit_code == kExitOk);
    CHECK(r.out == oracle);
    CHECK(r.err.empty());
  }
}

TEST_CASE("STARTTLS: dovecot without TLS declines LMTP's STARTTLS and offers none in ManageSieve",
          "[fetch][cli]") {
  if (const auto why = dovecot_missing(); !why.empty()) GETCERT_SKIP(why);
  const auto dovecot = start_dovecot(/*with_tls=*/false);

  const auto lmtp =
      run_getcert({"--starttls", "lmtp", target(dovecot.lmtp_port), "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(lmtp));
  CHECK(lmtp.exit_code == kExitTls);
  CHECK(lmtp.out.empty());
  CHECK(lmtp.err == "getcert: error: " + target(dovecot.lmtp_port) +
                        ": LMTP server did not accept the switch to TLS (it answered \"502 5.5.1 "
                        "TLS support is not enabled.\")\n");

  const auto sieve = run_getcert(
      {"--starttls", "sieve", target(dovecot.sieve_port), "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(sieve));
  CHECK(sieve.exit_code == kExitTls);
  CHECK(sieve.out.empty());
  CHECK_THAT(sieve.err, Contains("ManageSieve server does not offer STARTTLS (its capabilities: "
                                 "\"IMPLEMENTATION SIEVE NOTIFY SASL VERSION\")"));
  CHECK(std::count(sieve.err.begin(), sieve.err.end(), '\n') == 1);
}

TEST_CASE("STARTTLS: a ManageSieve server's NO or BYE is a TLS error quoting it", "[fetch][cli]") {
  const std::string capabilities = "\"IMPLEMENTATION\" \"scripted\"\r\n\"STARTTLS\"\r\n";
  struct Case {
    const char* name;
    HostilePeer::Script script;
    const char* quoted;
  };
  const Case cases[] = {
      {"NO to STARTTLS",
       {{Kind::send, capabilities + "OK \"ready\"\r\n", 0ms},
        {Kind::read_until, "\n", 0ms},
        {Kind::send, "NO (TRYLATER) \"TLS is \\\"busy\\\"\"\r\n", 0ms}},
       R"("NO (TRYLATER) "TLS is \"busy\""")"},
      {"BYE greeting",
       {{Kind::send, "BYE \"Too many connections\"\r\n", 0ms}},
       R"("BYE "Too many connections"")"},
      {"BYE to STARTTLS, in a literal",
       {{Kind::send, capabilities + "OK\r\n", 0ms},
        {Kind::read_until, "\n", 0ms},
        {Kind::send, "BYE {12}\r\nshutting\r\ndn\r\n", 0ms}},
       R"("BYE {12}\x0d\x0ashutting\x0d\x0adn")"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    HostilePeer peer(c.script);
    const auto r =
        run_getcert({"--starttls", "sieve", target(peer.port()), "--ca-file", pki("root.pem")});
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == kExitTls);
    CHECK(r.out.empty());
    CHECK(r.err == "getcert: error: " + target(peer.port()) +
                       ": ManageSieve server did not accept the switch to TLS (it answered " +
                       c.quoted + ")\n");
  }
}

TEST_CASE("STARTTLS: LMTP and ManageSieve servers that stall after greeting time out",
          "[fetch][cli]") {
  struct Case {
    const char* protocol;
    const char* greeting;
  };
  for (const auto& c : {Case{"lmtp", "220 lmtp.test LMTP ready\r\n"},
                        Case{"sieve", "\"STARTTLS\"\r\n\"VERSION\" \"1.0\"\r\n"}}) {
    INFO(c.protocol);
    // The greeting, then silence: LMTP never answers LHLO, ManageSieve never ends its list.
    HostilePeer peer({{Kind::send, c.greeting, 0ms}, {Kind::hold, "", 0ms}});
    const auto r = run_getcert({"--starttls", c.protocol, "--timeout", "1s", target(peer.port()),
                                "--ca-file", pki("root.pem")},
                               10s);
    INFO(getcert::test::explain(r));
    CHECK(r.exit_code == kExitNetwork);
    CHECK_THAT(r.err, Contains("did not answer the STARTTLS exchange in time"));
    CHECK(r.elapsed < 2500ms);
  }
}
