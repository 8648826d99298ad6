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

namespace {

// A CA file the server trusts for client certificates and lists in its CertificateRequest.
std::string client_ca_file(TempDir& dir) {
  std::string path = dir / "client-cas.pem";
  write_file(path, read_file(pki("root.pem")) + read_file(pki("intermediate.pem")));
  return path;
}

const std::vector<std::string> kListedCas = {"CN=getcert Test Root CA,O=getcert tests",
                                             "CN=getcert Test Intermediate CA,O=getcert tests"};

// s_server that asks for a client certificate: -Verify requires one, -verify only asks;
// -verify_return_error makes it refuse a certificate it cannot verify (it logs and goes on
// otherwise).
TlsServer mtls_server(const std::string& tls_flag, const std::string& verify_flag,
                      const std::string& ca_file) {
  return s_server_with({tls_flag, verify_flag, "2", "-CAfile", ca_file, "-verify_return_error"});
}

Json json_of(const RunResult& r) { return parse_json(r.out); }

// Runs `check(server)` against an s_server that asks for (-verify) or requires (-Verify) a
// client certificate from the PKI, once with TLS 1.2 and once with TLS 1.3.
template <typename Check>
void for_each_mtls_server(const std::string& verify_flag, Check check) {
  TempDir dir;
  const std::string cas = client_ca_file(dir);
  for (const std::string version : {"-tls1_2", "-tls1_3"}) {
    INFO("server " << version);
    const auto server = mtls_server(version, verify_flag, cas);
    check(server);
  }
}

// `getcert -o json` against a server that asked for a client certificate, offering none: the
// chain verifies, the report lists the CAs the server named, and says whether the handshake
// went through (`completes`).
Json fetched_without_client_cert(const TlsServer& server, bool completes) {
  const RunResult r = run_getcert(fetch_args(server.port(), {"-o", "json"}));
  INFO(explain(r));
  // The exit code follows the verification, which the captured chain passes.
  CHECK(r.exit_code == kExitOk);
  const Json j = json_of(r);
  CHECK(j["tls"]["client_certificate_requested"] == true);
  CHECK(j["tls"]["client_certificate_sent"] == false);
  CHECK(j["tls"]["handshake_completed"] == completes);
  CHECK(j["tls"]["acceptable_client_cas"] == Json(kListedCas));
  return j;
}

}  // namespace

TEST_CASE("a server that requires a client certificate: the chain is still fetched", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  for_each_mtls_server("-Verify", [](const TlsServer& server) {
    const Json j = fetched_without_client_cert(server, /*completes=*/false);
    CHECK(j["verification"]["ok"] == true);
    CHECK(j["presented_chain"].size() == 2);

    // PEM output is the chain, as for any server.
    const RunResult pem = run_getcert(fetch_args(server.port(), {}));
    INFO(explain(pem));
    CHECK(pem.exit_code == kExitOk);
    CHECK(pem.out == read_file(pki("rsa-chain.pem")));

    const RunResult text = run_getcert(fetch_args(server.port(), {"-o", "text"}));
    INFO(explain(text));
    CHECK_THAT(text.out, Contains("requested") && Contains(kListedCas[0]) &&
                             Contains(kListedCas[1]) && Contains("refused"));
  });
}

TEST_CASE("a server that only asks for a client certificate completes without one", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  for_each_mtls_server("-verify", [](const TlsServer& server) {
    fetched_without_client_cert(server, /*completes=*/true);
  });
  // A server that asks for nothing reports nothing requested and an empty list.
  const auto plain = s_server_with({});
  const RunResult r = run_getcert(fetch_args(plain.port(), {"-o", "json"}));
  INFO(explain(r));
  const Json j = json_of(r);
  CHECK(j["tls"]["client_certificate_requested"] == false);
  CHECK(j["tls"]["client_certificate_sent"] == false);
  CHECK(j["tls"]["handshake_completed"] == true);
  CHECK(j["tls"]["acceptable_client_cas"] == Json::array());
}

TEST_CASE("client-cert and client-key complete a handshake that requires them", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  for_each_mtls_server("-Verify", [](const TlsServer& server) {
    const RunResult r = run_getcert(
        fetch_args(server.port(), {"-o", "json", "--client-cert", pki("client-chain.pem"),
                                   "--client-key", pki("client.key")}));
    INFO(explain(r) << "\nserver log:\n" << server.log());
    CHECK(r.exit_code == kExitOk);
    const Json j = json_of(r);
    CHECK(j["tls"]["client_certificate_requested"] == true);
    CHECK(j["tls"]["client_certificate_sent"] == true);
    CHECK(j["tls"]["handshake_completed"] == true);
    // s_server prints the subject of a client certificate it accepted.
    CHECK_THAT(server.log(), Contains("getcert test client"));

    // A certificate the server does not trust is sent, and refused: in TLS 1.3 only the
    // alert after getcert's Finished says so.
    const RunResult refused = run_getcert(
        fetch_args(server.port(), {"-o", "json", "--client-cert", pki("untrusted-chain.pem"),
                                   "--client-key", pki("untrusted.key")}));
    INFO(explain(refused));
    CHECK(refused.exit_code == kExitOk);
    const Json k = json_of(refused);
    CHECK(k["tls"]["client_certificate_sent"] == true);
    CHECK(k["tls"]["handshake_completed"] == false);
  });
}

TEST_CASE("client-p12 offers the identity of a PKCS#12 file made by openssl", "[cli]") {
  REQUIRE_TOOL(have_openssl(), "openssl");
  TempDir dir;
  const std::string cas = client_ca_file(dir);
  const std::string p12 = dir / "client.p12";
  getcert::test::openssl({"pkcs12", "-export", "-in", pki("client.pem"), "-inkey",
                          pki("client.key"), "-certfile", pki("intermediate.pem"), "-out", p12,
                          "-passout", "pass:s3cret"});
  const std::string good = dir / "good.txt";
  const std::string bad = dir / "bad.txt";
  write_file(good, "s3cret\n");
  write_file(bad, "wrong\n");
  const auto server = mtls_server("-tls1_3", "-Verify", cas);

  const RunResult r = run_getcert(
      fetch_args(server.port(), {"-o", "json", "--client-p12", p12, "--password-file", good}));
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  const Json j = json_of(r);
  CHECK(j["tls"]["client_certificate_sent"] == true);
  CHECK(j["tls"]["handshake_completed"] == true);

  const RunResult wrong =
      run_getcert(fetch_args(server.port(), {"--client-p12", p12, "--password-file", bad}));
  INFO(explain(wrong));
  CHECK(wrong.exit_code == kExitWrongPassword);
  CHECK(wrong.out.empty());
}

TEST_CASE("client identity usage errors exit 2 before dialing", "[cli]") {
  const RunResult no_key = run_getcert({"localhost:9", "--client-cert", pki("client.pem")});
  INFO(explain(no_key));
  CHECK(no_key.exit_code == kExitUsage);
  CHECK_THAT(no_key.err, Contains("--client-key"));

  const RunResult mismatch = run_getcert(
      {"localhost:9", "--client-cert", pki("client.pem"), "--client-key", pki("rsa.key")});
  INFO(explain(mismatch));
  CHECK(mismatch.exit_code == kExitUsage);
  CHECK_THAT(mismatch.err, Contains("does not match"));

  const RunResult both = run_getcert({"localhost:9", "--client-cert", pki("client.pem"),
                                      "--client-key", pki("client.key"), "--client-p12", "x.p12"});
  INFO(explain(both));
  CHECK(both.exit_code == kExitUsage);
}
