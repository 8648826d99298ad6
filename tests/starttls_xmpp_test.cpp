// XMPP STARTTLS against a real prosody (Debian's package), started by the test in a temp dir with
// its own config on free loopback ports (c2s and s2s) and the test PKI's RSA chain: the chain
// getcert prints is the one `openssl s_client -starttls xmpp` sees, the stream's `to` is the
// host or --starttls-name, and servers that refuse are named.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "getcert/fetch.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/tls_servers.hpp"

namespace {

using Catch::Matchers::Contains;
using getcert::test::pki;
using getcert::test::Process;
using getcert::test::run_getcert;

constexpr const char* kProsody = "/usr/bin/prosody";  // Debian's prosody package
bool have_prosody() { return ::access(kProsody, X_OK) == 0; }

// prosody in the foreground, serving the domains "localhost" and "rsa.test"; `with_tls`: with
// the RSA chain (without it prosody offers no STARTTLS).
struct Prosody {
  std::unique_ptr<getcert::test::TempDir> dir;
  Process process;
  std::uint16_t c2s;
  std::uint16_t s2s;
};

Prosody start_prosody(bool with_tls) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto dir = std::make_unique<getcert::test::TempDir>();
    const std::uint16_t c2s = getcert::test::free_port();
    const std::uint16_t s2s = getcert::test::free_port();
    if (c2s == s2s) continue;
    std::string conf =
        "pidfile = \"" + (*dir / "prosody.pid") + "\"\ndata_path = \"" + dir->path().string() +
        "\"\n"
        "run_as_root = true\n"  // CI runs as root; harmless otherwise
        "certificates = \"" +
        (*dir / "certs") +  // not /etc/prosody/certs
        "\"\nmodules_enabled = { " + (with_tls ? "\"tls\"; " : "") +
        "\"dialback\"; \"saslauth\"; \"disco\" }\n"
        "modules_disabled = { \"posix\"" +
        (with_tls ? "" : "; \"tls\"") +
        " }\n"
        "c2s_ports = { " +
        std::to_string(c2s) + " }\nc2s_interfaces = { \"127.0.0.1\" }\ns2s_ports = { " +
        std::to_string(s2s) +
        " }\ns2s_interfaces = { \"127.0.0.1\" }\n"
        "c2s_direct_tls_ports = { }\nlegacy_ssl_ports = { }\nhttp_ports = { }\n"
        "https_ports = { }\ncomponent_ports = { }\n"
        "log = { info = \"*console\" }\n"
        "storage = \"internal\"\nauthentication = \"internal_hashed\"\n";
    if (!with_tls) {
      // Else prosody ends a stream it cannot encrypt with a stream error instead of features.
      conf +=
          "c2s_require_encryption = false\ns2s_require_encryption = false\n"
          "allow_unencrypted_plain_auth = true\n";
    }
    if (with_tls) {
      conf += "ssl = { certificate = \"" + pki("rsa-chain.pem") + "\"; key = \"" + pki("rsa.key") +
              "\" }\n";
    }
    conf += "VirtualHost \"localhost\"\nVirtualHost \"rsa.test\"\n";
    getcert::test::write_file(*dir / "prosody.cfg.lua", conf);
    getcert::test::SpawnOptions options;
    options.die_with_parent = true;
    options.own_process_group = true;
    Process p = Process::spawn({kProsody, "-F", "--config", *dir / "prosody.cfg.lua"}, options);
    if (getcert::test::wait_for_port("127.0.0.1", c2s, std::chrono::seconds(10), &p) &&
        getcert::test::wait_for_port("127.0.0.1", s2s, std::chrono::seconds(10), &p)) {
      return {std::move(dir), std::move(p), c2s, s2s};
    }
  }
  FAIL("prosody did not start");
  throw std::logic_error("unreachable");
}

std::string s_client_xmpp(const char* protocol, std::uint16_t port, const std::string& domain) {
  return getcert::test::certificate_blocks(
      getcert::test::openssl({"s_client", "-starttls", protocol, "-xmpphost", domain, "-connect",
                              "127.0.0.1:" + std::to_string(port), "-showcerts"}));
}

}  // namespace

TEST_CASE("XMPP: c2s and s2s with prosody give the chain openssl s_client -starttls xmpp sees",
          "[fetch][cli]") {
  if (!have_prosody()) GETCERT_SKIP("prosody is not installed");
  REQUIRE_TOOL(getcert::test::have_openssl(), "openssl");
  const auto prosody = start_prosody(/*with_tls=*/true);
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  struct Case {
    const char* protocol;
    std::uint16_t port;
  };
  for (const Case c : {Case{"xmpp", prosody.c2s}, Case{"xmpp-server", prosody.s2s}}) {
    INFO("protocol " << c.protocol);
    const std::string oracle = s_client_xmpp(c.protocol, c.port, "localhost");
    CHECK(oracle == expected);
    const auto r = run_getcert({"--starttls", c.protocol, "localhost:" + std::to_string(c.port),
                                "--ca-file", pki("root.pem")});
    INFO(getcert::test::explain(r) << "\nprosody:\n" << prosody.process.stdout_text());
    CHECK(r.exit_code == 0);
    CHECK(r.out == oracle);
    CHECK(r.err.empty());
  }
}

TEST_CASE(
    "XMPP: --starttls-name is the stream's domain; a domain prosody does not serve is "
    "its stream error",
    "[fetch][cli]") {
  if (!have_prosody()) GETCERT_SKIP("prosody is not installed");
  const auto prosody = start_prosody(/*with_tls=*/true);
  const std::string ip_target = "127.0.0.1:" + std::to_string(prosody.c2s);

  // An IP address is no XMPP domain: the name comes from --starttls-name.
  const auto served = run_getcert({"--starttls", "xmpp", "--starttls-name", "rsa.test", ip_target,
                                   "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(served));
  CHECK(served.exit_code == 0);
  CHECK(served.out == getcert::test::read_file(pki("rsa-chain.pem")));

  const auto unknown = run_getcert({"--starttls", "xmpp", "--starttls-name", "nope.test", ip_target,
                                    "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(unknown));
  CHECK(unknown.exit_code == 4);
  CHECK(unknown.out.empty());
  CHECK_THAT(unknown.err, Contains("XMPP server sent a stream error") &&
                              Contains("\"host-unknown\"") && Contains("nope.test"));
  CHECK(std::count(unknown.err.begin(), unknown.err.end(), '\n') == 1);
}

TEST_CASE("XMPP: a server without STARTTLS in its stream features is exit 4 naming them",
          "[fetch][cli]") {
  if (!have_prosody()) GETCERT_SKIP("prosody is not installed");
  const auto prosody = start_prosody(/*with_tls=*/false);
  const auto r = run_getcert({"--starttls", "xmpp", "localhost:" + std::to_string(prosody.c2s),
                              "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("XMPP server does not offer STARTTLS (its stream features:") &&
                        Contains("mechanisms"));
}

TEST_CASE("XMPP: an IP address without --starttls-name, and bad names, are usage errors", "[cli]") {
  // Nothing listens on the port: exit 2 proves nothing was dialed.
  const std::string target = "127.0.0.1:" + std::to_string(getcert::test::closed_port());
  const auto ip = run_getcert({"--starttls", "xmpp", target});
  CHECK(ip.exit_code == 2);
  CHECK_THAT(ip.err, Contains("--starttls xmpp to an IP address needs --starttls-name"));

  for (const std::string bad : {"a b", "x'y", "<x>", "a\"b", "a&b", "tab\tname", ""}) {
    INFO("name '" << bad << "'");
    const auto r = run_getcert({"--starttls", "xmpp", "--starttls-name", bad, target});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--starttls-name"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto unused = run_getcert({"--starttls", "imap", "--starttls-name", "x.test", target});
  CHECK(unused.exit_code == 2);
  // The list comes from the library's table (getcert/starttls.hpp), in its order.
  CHECK_THAT(
      unused.err,
      Contains("--starttls-name is used only by --starttls smtp, xmpp, xmpp-server and lmtp"));

  // The library refuses the same, before dialing.
  getcert::ConnectOptions options;
  options.starttls = getcert::StartTls::xmpp_server;
  auto r = getcert::connect(target, options);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == getcert::Errc::invalid_argument);
  options.starttls_name = "evil'/><x";
  r = getcert::connect("localhost:1", options);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == getcert::Errc::invalid_argument);
}
