// The handshake options of `getcert fetch` as a user runs them, against openssl s_server on
// loopback: --tls-min/--tls-max, and client certificates (--client-cert/--client-key,
// --client-p12) with servers that request or require one.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using getcert::test::pki;
using getcert::test::pki_chain;
using getcert::test::run_getcert;
using getcert::test::RunResult;
using getcert::test::TlsServer;
using Json = nlohmann::json;

using namespace getcert::test;  // exit codes, explain(), parse_json()

namespace {

TlsServer s_server_with(std::vector<std::string> extra_args) {
  OpenSslServerOptions o;
  o.served = pki_chain("rsa");
  o.extra_args = std::move(extra_args);
  return start_openssl_server(o);
}

std::vector<std::string> fetch_args(std::uint16_t port, std::vector<std::string> extra) {
  std::vector<std::string> args{"localhost:" + std::to_string(port), "--ca-file",
                                pki("ca-bundle.pem")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("tls-max and tls-min pick the version, and JSON reports it", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  // OpenSSL 3 refuses TLS 1.0/1.1 at its default security level, on both sides.
  const auto any = s_server_with({"-cipher", "ALL:@SECLEVEL=0"});
  struct Case {
    std::vector<std::string> args;
    std::string version;
  };
  for (const Case& c : std::vector<Case>{{{}, "TLSv1.3"},
                                         {{"--tls-max", "1.2"}, "TLSv1.2"},
                                         {{"--tls-max", "1.1"}, "TLSv1.1"},
                                         {{"--tls-min", "1.0", "--tls-max", "1.0"}, "TLSv1"},
                                         {{"--tls-min", "1.3"}, "TLSv1.3"}}) {
    auto args = fetch_args(any.port(), c.args);
    args.insert(args.end(), {"-o", "json"});
    const RunResult r = run_getcert(args);
    INFO(explain(r));
    REQUIRE(r.exit_code == kExitOk);
    CHECK(parse_json(r.out)["tls"]["version"] == c.version);
  }
}

TEST_CASE("a server that cannot meet tls-min/tls-max is exit 4 naming the versions", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  const auto only12 = s_server_with({"-tls1_2"});
  const auto only13 = s_server_with({"-tls1_3"});

  const RunResult too_old = run_getcert(fetch_args(only12.port(), {"--tls-min", "1.3"}));
  INFO(explain(too_old));
  CHECK(too_old.exit_code == kExitTls);
  CHECK(too_old.out.empty());
  CHECK_THAT(too_old.err, Contains("TLS 1.3 only") && Contains("--tls-min"));

  const RunResult too_new = run_getcert(fetch_args(only13.port(), {"--tls-max", "1.2"}));
  INFO(explain(too_new));
  CHECK(too_new.exit_code == kExitTls);
  CHECK_THAT(too_new.err, Contains("TLS 1.0 to 1.2") && Contains("--tls-max"));

  // Within the server's range the same options succeed.
  CHECK(run_getcert(fetch_args(only12.port(), {"--tls-max", "1.2"})).exit_code == kExitOk);
  CHECK(run_getcert(fetch_args(only13.port(), {"--tls-min", "1.3"})).exit_code == kExitOk);
}

TEST_CASE("tls-min/tls-max usage errors exit 2 before dialing", "[cli]") {
  // Port 9 on loopback: nothing is sent, so nothing needs to listen there.
  const RunResult inverted = run_getcert({"localhost:9", "--tls-min", "1.3", "--tls-max", "1.2"});
  INFO(explain(inverted));
  CHECK(inverted.exit_code == kExitUsage);
  CHECK_THAT(inverted.err, Contains("--tls-min 1.3 is above --tls-max 1.2"));
  const RunResult unknown = run_getcert({"localhost:9", "--tls-min", "1.4"});
  INFO(explain(unknown));
  CHECK(unknown.exit_code == kExitUsage);
  CHECK_THAT(unknown.err, Contains("1.4"));
}
