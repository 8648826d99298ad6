// STARTTLS: getcert speaks each protocol's plain-text preamble to a real server (a small
// Python server that then hands the socket to TLS, and OpenLDAP's slapd for LDAP), and the
// chain it prints equals what the server presents; a refused upgrade and a silent server give
// clear errors.

#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/local_server.hpp"
#include "support/net.hpp"
#include "support/process.hpp"

namespace {

using Catch::Matchers::Contains;
using getcert::test::pki;
using getcert::test::Process;
using getcert::test::run_getcert;

getcert::test::LocalServer start(const std::string& protocol, bool refuse = false,
                                 const std::string& expect_ehlo = {}) {
  return getcert::test::start_local_server(
      [&](std::uint16_t port) {
        std::vector<std::string> argv{"python3",
                                      GETCERT_STARTTLS_SERVER,
                                      protocol,
                                      std::to_string(port),
                                      pki("rsa-chain.pem"),
                                      pki("rsa.key")};
        if (refuse) argv.emplace_back("--refuse");
        if (!expect_ehlo.empty()) argv.insert(argv.end(), {"--expect-ehlo", expect_ehlo});
        return argv;
      },
      "the STARTTLS test server");
}

}  // namespace

TEST_CASE("STARTTLS: every protocol upgrades and yields the presented chain", "[fetch][cli]") {
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  for (const std::string protocol : {"smtp", "imap", "pop3", "ftp", "postgres"}) {
    INFO("protocol " << protocol);
    auto server = start(protocol);
    const auto r = run_getcert({"--starttls", protocol, "localhost:" + std::to_string(server.port),
                                "--ca-file", pki("root.pem")});
    CHECK(r.exit_code == 0);
    CHECK(r.out == expected);
    CHECK(r.err.empty());
  }
}

TEST_CASE("STARTTLS: a server that declines the upgrade is a one-line TLS error", "[fetch][cli]") {
  auto server = start("smtp", /*refuse=*/true);
  const auto r = run_getcert({"--starttls", "smtp", "localhost:" + std::to_string(server.port),
                              "--ca-file", pki("root.pem")});
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("did not accept the switch to TLS") && Contains("454"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("STARTTLS: a TLS-only port answers nothing to the preamble and times out",
          "[fetch][cli]") {
  // An SMTP client waits for a greeting; a server waiting for a ClientHello says nothing.
  auto server = start("postgres");  // waits for 8 bytes, never greets
  const auto r =
      run_getcert({"--starttls", "smtp", "--timeout", "1s",
                   "localhost:" + std::to_string(server.port), "--ca-file", pki("root.pem")},
                  std::chrono::seconds(10));
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Contains("did not answer the STARTTLS exchange in time"));
  CHECK(r.elapsed < std::chrono::milliseconds(2500));
}

TEST_CASE("STARTTLS: unknown protocol is a usage error", "[cli]") {
  const auto r = run_getcert({"--starttls", "gopher", "localhost:1"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--starttls") && Contains("smtp"));
}

namespace {

// OpenLDAP's slapd in the foreground with its own slapd.conf and database in a temp dir;
// `with_tls`: configured with the test PKI's RSA chain (else it refuses StartTLS).
struct Slapd {
  std::unique_ptr<getcert::test::TempDir> dir;
  Process process;
  std::uint16_t port;
};

constexpr const char* kSlapd = "/usr/sbin/slapd";  // Debian's slapd package
bool have_slapd() { return ::access(kSlapd, X_OK) == 0; }

Slapd start_slapd(bool with_tls) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto dir = std::make_unique<getcert::test::TempDir>();
    std::filesystem::create_directory(dir->path() / "db");
    std::string conf =
        "include /etc/ldap/schema/core.schema\n"
        "pidfile " +
        (*dir / "slapd.pid") + "\nargsfile " + (*dir / "slapd.args") +
        "\nmodulepath /usr/lib/ldap\nmoduleload back_mdb\n";
    if (with_tls) {
      conf += "TLSCertificateFile " + pki("rsa-chain.pem") + "\nTLSCertificateKeyFile " +
              pki("rsa.key") + "\n";
    }
    conf += "database mdb\nsuffix \"dc=getcert,dc=test\"\ndirectory " + (*dir / "db") + "\n";
    getcert::test::write_file(*dir / "slapd.conf", conf);
    const std::uint16_t port = getcert::test::free_port();
    getcert::test::SpawnOptions options;
    options.die_with_parent = true;
    Process p =
        Process::spawn({kSlapd, "-d", "0", "-h", "ldap://127.0.0.1:" + std::to_string(port) + "/",
                        "-f", *dir / "slapd.conf"},
                       options);
    if (getcert::test::wait_for_port("127.0.0.1", port, std::chrono::seconds(10), &p)) {
      return {std::move(dir), std::move(p), port};
    }
  }
  FAIL("slapd did not start");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("STARTTLS: LDAP with slapd gives the chain openssl s_client -starttls ldap sees",
          "[fetch][cli]") {
  if (!have_slapd()) GETCERT_SKIP("slapd is not installed");
  const auto slapd = start_slapd(/*with_tls=*/true);
  const std::string target = "localhost:" + std::to_string(slapd.port);
  const std::string oracle = getcert::test::certificate_blocks(
      getcert::test::openssl({"s_client", "-starttls", "ldap", "-connect",
                              "127.0.0.1:" + std::to_string(slapd.port), "-showcerts"}));
  CHECK(oracle == getcert::test::read_file(pki("rsa-chain.pem")));
  const auto r = run_getcert({"--starttls", "ldap", target, "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r) << "\nslapd:\n" << slapd.process.stderr_text());
  CHECK(r.exit_code == 0);
  CHECK(r.out == oracle);
  CHECK(r.err.empty());
}

TEST_CASE("STARTTLS: an LDAP server without TLS declines, quoting its result and diagnostic",
          "[fetch][cli]") {
  if (!have_slapd()) GETCERT_SKIP("slapd is not installed");
  const auto slapd = start_slapd(/*with_tls=*/false);
  const auto r = run_getcert({"--starttls", "ldap", "localhost:" + std::to_string(slapd.port),
                              "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(r));
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  // slapd without TLS settings does not know the StartTLS operation.
  CHECK_THAT(r.err, Contains("LDAP server declined StartTLS: result 2 (protocolError)") &&
                        Contains("unsupported extended operation"));
}

TEST_CASE("STARTTLS: SMTP's EHLO names the local address, or --starttls-name", "[fetch][cli]") {
  const std::string expected = getcert::test::read_file(pki("rsa-chain.pem"));
  // By default an address literal (RFC 5321 4.1.3): no DNS needed, accepted by strict servers.
  auto literal = start("smtp", false, "[127.0.0.1]");
  const auto by_default =
      run_getcert({"--starttls", "smtp", "127.0.0.1:" + std::to_string(literal.port), "--ca-file",
                   pki("root.pem")});
  INFO(getcert::test::explain(by_default));
  CHECK(by_default.exit_code == 0);
  CHECK(by_default.out == expected);

  auto named = start("smtp", false, "client.example.org");
  const auto with_name =
      run_getcert({"--starttls", "smtp", "--starttls-name", "client.example.org",
                   "localhost:" + std::to_string(named.port), "--ca-file", pki("root.pem")});
  INFO(getcert::test::explain(with_name));
  CHECK(with_name.exit_code == 0);
  CHECK(with_name.out == expected);

  // The server checks: another name is its 501, quoted.
  const auto other =
      run_getcert({"--starttls", "smtp", "--starttls-name", "other.example.org",
                   "localhost:" + std::to_string(named.port), "--ca-file", pki("root.pem")});
  CHECK(other.exit_code == 4);
  CHECK_THAT(other.err, Contains("501") && Contains("got: EHLO other.example.org"));
}
