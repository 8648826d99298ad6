// `getcert fetch` verification options as a user meets them, against real servers on loopback:
// a server that forgets its intermediate (with and without the AIA URL answering), OCSP
// staples, online OCSP and CRL checks, --expires-in, --at, --pin, and the names users type.
// Oracles: `openssl ocsp`, `openssl verify -crl_check`, and the openssl SPKI pin pipeline.
//
// Servers run on the PKI's fixed AIA/CRL (18080) and OCSP (18081) ports: every case here holds
// the ctest RESOURCE_LOCK pki_fixed_ports (tests/CMakeLists.txt).

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/hostile_peer.hpp"
#include "support/http_server.hpp"
#include "support/issued_leaf.hpp"
#include "support/ocsp_responder.hpp"
#include "support/tls_servers.hpp"

using Catch::Matchers::Contains;
using Json = nlohmann::json;
using namespace std::chrono_literals;

using namespace getcert::test;  // the harness: pki(), run_getcert(), exit codes, explain()

namespace {

const std::string kAiaUrl = "http://127.0.0.1:18080/intermediate.der";
const std::string kIntermediate = "CN=getcert Test Intermediate CA,O=getcert tests";

#define REQUIRE_OPENSSL()                                                         \
  do {                                                                            \
    if (!getcert::test::have_openssl()) GETCERT_SKIP("openssl is not installed"); \
  } while (false)

std::string at(const std::string& host, std::uint16_t port) {
  return host + ":" + std::to_string(port);
}

// getcert HOST:PORT --ca-file root.pem EXTRA...
RunResult getcert_at(std::uint16_t port, std::vector<std::string> extra = {},
                     const std::string& host = "localhost") {
  std::vector<std::string> args{at(host, port), "--ca-file", pki("root.pem")};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_getcert(args);
}

std::vector<std::string> codes_of(const Json& verification) {
  std::vector<std::string> out;
  for (const auto& e : verification.at("errors")) out.push_back(e.at("code").get<std::string>());
  return out;
}

TlsServer stapling_server(const std::string& leaf, const std::string& staple) {
  getcert::test::OpenSslServerOptions o;
  o.served = pki_chain(leaf);
  o.extra_args = {"-status_file", pki(staple)};
  return getcert::test::start_openssl_server(o);
}

// Days until the PKI's certificate `name` expires, as getcert counts them.
std::int64_t days_left(const std::string& name) {
  const auto certs = getcert::parse_certificates_pem(read_file(pki(name)));
  REQUIRE(certs);
  return certs->front().days_left(static_cast<std::int64_t>(std::time(nullptr)));
}

std::string openssl_pin(const std::string& cert) {
  const std::string o = GETCERT_TEST_OPENSSL;
  const auto r = getcert::test::run_shell(o + " x509 -in '" + cert + "' -pubkey -noout | " + o +
                                          " pkey -pubin -outform DER | " + o +
                                          " dgst -sha256 -binary | " + o + " base64 -A");
  REQUIRE(r.exit_code == 0);
  return "sha256/" + r.out;
}

}  // namespace

// ---- a server that forgets its intermediate --------------------------------------------------

TEST_CASE("leaf-only server, AIA URL unreachable: exit 5 naming the intermediate and the URL",
          "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = getcert_at(server.port());
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("verification failed") && Contains("'getcert Test Intermediate CA'") &&
                        Contains(kAiaUrl));

  const auto json = getcert_at(server.port(), {"-o", "json"});
  INFO(explain(json));
  CHECK(json.exit_code == kExitVerify);
  const Json v = parse_json(json.out).at("verification");
  CHECK(v.at("verdict") == "invalid");
  CHECK(v.at("ok") == false);
  CHECK(v.at("trusted") == false);
  CHECK(v.at("fetched_intermediates") == Json::array());
  REQUIRE(v.at("errors").size() == 1);
  CHECK(v.at("errors")[0].at("depth") == 0);
  CHECK(v.at("errors")[0].at("code") == "missing_intermediate");
}

TEST_CASE("leaf-only server, AIA URL serving the intermediate: valid_only_with_aia_fetch",
          "[cli]") {
  REQUIRE_OPENSSL();
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));

  const auto json = getcert_at(server.port(), {"-o", "json"});
  INFO(explain(json));
  CHECK(json.exit_code == kExitVerify);  // most clients would fail against this server
  const Json j = parse_json(json.out);
  const Json& v = j.at("verification");
  CHECK(v.at("verdict") == "valid_only_with_aia_fetch");
  CHECK(v.at("ok") == false);
  CHECK(v.at("trusted") == true);
  CHECK(v.at("fetched_intermediates") == Json::array({kIntermediate}));
  CHECK(codes_of(v) == std::vector<std::string>{"missing_intermediate"});
  CHECK_THAT(v.at("errors")[0].at("reason").get<std::string>(),
             Contains("fetched from " + kAiaUrl));
  CHECK(j.at("presented_chain").size() == 1);
  CHECK(j.at("verified_chain").size() == 3);

  SECTION("--insecure --select root prints the trust anchor a client needs") {
    const auto root = getcert_at(server.port(), {"--insecure", "--select", "root"});
    INFO(explain(root));
    CHECK(root.exit_code == kExitOk);
    CHECK(root.out == read_file(pki("root.pem")));
    CHECK_THAT(root.err, Contains("fetched from " + kAiaUrl));
  }
  SECTION("--insecure --select verified prints leaf, downloaded intermediate, root") {
    const auto chain = getcert_at(server.port(), {"--insecure", "--select", "verified"});
    INFO(explain(chain));
    CHECK(chain.exit_code == kExitOk);
    CHECK(chain.out == read_file(pki("rsa-chain.pem")) + read_file(pki("root.pem")));
  }
  SECTION("without --insecure nothing is printed") {
    const auto plain = getcert_at(server.port(), {"--select", "root"});
    INFO(explain(plain));
    CHECK(plain.exit_code == kExitVerify);
    CHECK(plain.out.empty());
  }
}

TEST_CASE("with --no-fetch-missing no HTTP request is made, and the verdict is invalid", "[cli]") {
  REQUIRE_OPENSSL();
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = getcert_at(server.port(), {"--no-fetch-missing", "-o", "json"});
  INFO(explain(r));
  CHECK(http.connections_settled() == 0);
  CHECK(r.exit_code == kExitVerify);
  const Json v = parse_json(r.out).at("verification");
  CHECK(v.at("verdict") == "invalid");
  CHECK(v.at("fetched_intermediates") == Json::array());
  CHECK(codes_of(v) == std::vector<std::string>{"missing_intermediate"});
}

TEST_CASE("with --no-fetch-missing the advice names no option fetch does not have", "[cli]") {
  // The advice must not send users to `getcert fetch --fetch-missing`, a usage error (exit 2).
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = getcert_at(server.port(), {"--no-fetch-missing"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  const auto advice = getcert_at(server.port(), {"--fetch-missing"});
  INFO("the advice, followed: " << explain(advice));
  CHECK((r.err.find("--fetch-missing completes") == std::string::npos ||
         advice.exit_code != kExitUsage));
}

TEST_CASE("intermediate only in the --ca-file bundle: incomplete_chain, found only locally",
          "[cli]") {
  REQUIRE_OPENSSL();
  getcert::test::TempDir tmp;
  getcert::test::write_file(tmp / "bundle.pem",
                            read_file(pki("root.pem")) + read_file(pki("intermediate.pem")));
  HttpServer http;
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r =
      run_getcert({at("localhost", server.port()), "--ca-file", tmp / "bundle.pem", "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(http.connections_settled() == 0);
  const Json v = parse_json(r.out).at("verification");
  CHECK(v.at("verdict") == "incomplete_chain");
  CHECK(v.at("trusted") == true);
  REQUIRE(v.at("errors").size() == 1);
  CHECK(v.at("errors")[0].at("depth") == 1);
  CHECK(v.at("errors")[0].at("code") == "missing_intermediate");
  CHECK_THAT(r.err, Contains("'getcert Test Intermediate CA'") &&
                        Contains("found only in the local trust store"));
}

TEST_CASE("a stalled AIA server does not hold getcert past --timeout", "[cli]") {
  REQUIRE_OPENSSL();
  HttpServer http(getcert::test::kPkiHttpPort, HttpServer::Behavior::silent);
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = getcert_at(server.port(), {"--timeout", "2s"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(r.elapsed <= 3500ms);  // the limit + process start-up; a bound, not a speed test
  CHECK_THAT(r.err, Contains(kAiaUrl) && Contains("timed out"));
}

// ---- OCSP stapling -----------------------------------------------------------------------------

TEST_CASE("OCSP staples: status as openssl ocsp reads it, and the exit code it implies", "[cli]") {
  REQUIRE_OPENSSL();
  struct Case {
    std::string leaf;
    std::string staple;
    std::string status;
    int exit_code;
  };
  const std::vector<Case> cases = {{"good", "good-ocsp.der", "good", kExitOk},
                                   {"revoked", "revoked-ocsp.der", "revoked", kExitVerify},
                                   {"unknown", "unknown-ocsp.der", "unknown", kExitOk},
                                   {"good", "wrongkey-ocsp.der", "error", kExitVerify}};
  for (const auto& c : cases) {
    INFO(c.leaf << " stapling " << c.staple);
    const auto oracle = getcert::test::run(
        {GETCERT_TEST_OPENSSL, "ocsp", "-respin", pki(c.staple), "-CAfile", pki("root.pem"),
         "-issuer", pki("intermediate.pem"), "-cert", pki(c.leaf + ".pem")});
    INFO("openssl ocsp: " << oracle.out << oracle.err);
    if (c.status == "error") {
      CHECK_THAT(oracle.err, Contains("Response Verify Failure"));
    } else {
      CHECK_THAT(oracle.err, Contains("Response verify OK"));
      CHECK_THAT(oracle.out, Contains(pki(c.leaf + ".pem") + ": " + c.status));
    }

    const auto server = stapling_server(c.leaf, c.staple);
    const auto r = getcert_at(server.port(), {"-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == c.exit_code);
    const Json j = parse_json(r.out);
    CHECK(j.at("tls").at("ocsp_stapled") == true);
    const Json& v = j.at("verification");
    REQUIRE(v.at("revocation").size() == 1);
    CHECK(v.at("revocation")[0].at("depth") == 0);
    CHECK(v.at("revocation")[0].at("source") == "ocsp-staple");
    CHECK(v.at("revocation")[0].at("status") == c.status);
    if (c.status == "revoked") {
      CHECK(codes_of(v) == std::vector<std::string>{"revoked"});
      CHECK(v.at("revocation")[0].at("detail") == "keyCompromise");
      CHECK_THAT(r.err, Contains("revoked") && Contains("keyCompromise"));
    }
    if (c.status == "error") {
      CHECK(codes_of(v) == std::vector<std::string>{"bad_ocsp_staple"});
      CHECK_THAT(r.err, Contains("stapled OCSP response rejected"));
    }
    if (c.status == "unknown") {
      CHECK(v.at("ok") == true);
      CHECK_THAT(r.err,
                 Contains("getcert: warning:") && Contains("does not know this certificate"));
    }
    if (c.exit_code == kExitOk) {
      const auto pem = getcert_at(server.port());
      CHECK(pem.out == read_file(pki(c.leaf + "-chain.pem")));
    }
  }
}

TEST_CASE("a server without a staple reports ocsp_stapled false and no revocation entry", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("good"));
  const auto r = getcert_at(server.port(), {"-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  const Json j = parse_json(r.out);
  CHECK(j.at("tls").at("ocsp_stapled") == false);
  CHECK(j.at("verification").at("revocation") == Json::array());
}

// ---- online revocation --------------------------------------------------------------------------

TEST_CASE("online revocation: --check-revocation asks the OCSP responder the leaf names", "[cli]") {
  REQUIRE_OPENSSL();
  OcspResponder responder;
  const auto good = getcert::test::start_openssl_server(pki_chain("good"));
  const auto revoked = getcert::test::start_openssl_server(pki_chain("revoked"));
  const auto unknown = getcert::test::start_openssl_server(pki_chain("unknown"));

  const auto oracle = getcert::test::run(
      {GETCERT_TEST_OPENSSL, "ocsp", "-issuer", pki("intermediate.pem"), "-cert", pki("good.pem"),
       "-cert", pki("revoked.pem"), "-url", "http://127.0.0.1:18081", "-CAfile", pki("root.pem")});
  INFO("openssl ocsp: " << oracle.out << oracle.err << "\nresponder: " << responder.log());
  CHECK_THAT(oracle.out,
             Contains(pki("good.pem") + ": good") && Contains(pki("revoked.pem") + ": revoked"));

  SECTION("good") {
    const auto r = getcert_at(good.port(), {"--check-revocation", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    const Json v = parse_json(r.out).at("verification");
    CHECK(v.at("ok") == true);
    REQUIRE_FALSE(v.at("revocation").empty());
    const Json& leaf = v.at("revocation")[0];
    CHECK(leaf.at("depth") == 0);
    CHECK(leaf.at("source") == "ocsp");
    CHECK(leaf.at("url") == "http://127.0.0.1:18081");
    CHECK(leaf.at("status") == "good");
    const auto pem = getcert_at(good.port(), {"--check-revocation"});
    CHECK(pem.exit_code == kExitOk);
    CHECK(pem.out == read_file(pki("good-chain.pem")));
  }
  SECTION("revoked") {
    const auto r = getcert_at(revoked.port(), {"--check-revocation"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("revoked according to OCSP (http://127.0.0.1:18081)") &&
                          Contains("keyCompromise"));
  }
  SECTION("unknown to the responder: a warning, or a failure with --require-revocation") {
    const auto r = getcert_at(unknown.port(), {"--check-revocation"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK_THAT(r.err, Contains("getcert: warning:") && Contains("does not know this certificate"));
    const auto strict = getcert_at(unknown.port(), {"--require-revocation"});
    INFO(explain(strict));
    CHECK(strict.exit_code == kExitVerify);
    CHECK(strict.out.empty());
    CHECK_THAT(strict.err, Contains("does not know this certificate (--require-revocation)"));
  }
  SECTION("without --check-revocation nothing is asked") {
    const auto r = getcert_at(revoked.port(), {"-o", "json"});
    CHECK(r.exit_code == kExitOk);
    CHECK(parse_json(r.out).at("verification").at("revocation") == Json::array());
  }
}

TEST_CASE("responder down, CRL served: the CRL decides, as openssl verify -crl_check does",
          "[cli]") {
  REQUIRE_OPENSSL();
  const std::string crl_form =
      GENERATE(as<std::string>{}, "intermediate.crl", "intermediate-crl.pem");
  INFO("CRL served as " << crl_form);
  HttpServer http;
  http.serve("/intermediate.crl", read_file(pki(crl_form)));
  for (const std::string leaf : {"good", "revoked"}) {
    INFO("leaf: " << leaf);
    const auto oracle = getcert::test::run(
        {GETCERT_TEST_OPENSSL, "verify", "-crl_check", "-CRLfile", pki("intermediate-crl.pem"),
         "-CAfile", pki("root.pem"), "-untrusted", pki("intermediate.pem"), pki(leaf + ".pem")});
    INFO("openssl verify: " << oracle.out << oracle.err);
    const bool oracle_revoked = oracle.exit_code != 0;
    CHECK(oracle_revoked == (leaf == "revoked"));

    const auto server = getcert::test::start_openssl_server(pki_chain(leaf));
    const auto r = getcert_at(server.port(), {"--check-revocation", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == (oracle_revoked ? kExitVerify : kExitOk));
    const Json v = parse_json(r.out).at("verification");
    REQUIRE_FALSE(v.at("revocation").empty());
    const Json& entry = v.at("revocation")[0];
    CHECK(entry.at("source") == "crl");
    CHECK(entry.at("url") == "http://127.0.0.1:18080/intermediate.crl");
    CHECK(entry.at("status") == (oracle_revoked ? "revoked" : "good"));
    if (oracle_revoked) {
      CHECK(entry.at("detail") == "keyCompromise");
      CHECK(codes_of(v) == std::vector<std::string>{"revoked"});
    }
  }
  CHECK(http.requests() == std::vector<std::string>(2, "GET /intermediate.crl"));
}

TEST_CASE("responder and CRL both unreachable: a warning, but --require-revocation fails",
          "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("good"));
  const auto r = getcert_at(server.port(), {"--check-revocation"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  CHECK(r.out == read_file(pki("good-chain.pem")));
  CHECK_THAT(r.err, Contains("getcert: warning:") && Contains("certificate at depth 0") &&
                        Contains("cannot connect"));

  const auto strict = getcert_at(server.port(), {"--require-revocation"});
  INFO(explain(strict));
  CHECK(strict.exit_code == kExitVerify);
  CHECK(strict.out.empty());
  CHECK_THAT(strict.err, Contains("certificate at depth 0") && Contains("(--require-revocation)"));
}

TEST_CASE("a CRL URL that serves garbage: a warning, never a crash", "[cli]") {
  REQUIRE_OPENSSL();
  std::string garbage(2048, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) {
    garbage[i] = static_cast<char>((i * 7919U + 13U) % 251U);
  }
  garbage[0] = '\x30';  // looks like the start of a DER SEQUENCE, to get past a first glance
  HttpServer http;
  http.serve("/intermediate.crl", garbage);
  const auto server = getcert::test::start_openssl_server(pki_chain("revoked"));
  const auto r = getcert_at(server.port(), {"--check-revocation", "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  const Json v = parse_json(r.out).at("verification");
  REQUIRE_FALSE(v.at("revocation").empty());
  CHECK(v.at("revocation")[0].at("status") == "error");
  CHECK_THAT(r.err, Contains("getcert: warning:") && Contains("is not a valid CRL"));
  const auto strict = getcert_at(server.port(), {"--require-revocation"});
  INFO(explain(strict));
  CHECK(strict.exit_code == kExitVerify);
}

// ---- time ---------------------------------------------------------------------------------------

TEST_CASE("expiry window: --expires-in exits 6 naming the certificate and its days left", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("expiring"));
  const std::int64_t days = days_left("expiring.pem");
  REQUIRE(days >= 2);  // the PKI makes it expire 5 days after it was generated
  const std::string hours_more = std::to_string((days + 1) * 24 + 24) + "h";
  const std::string hours_less = std::to_string(days * 24 - 24) + "h";

  for (const std::string& window : std::vector<std::string>{"30d", "30", hours_more, "1w"}) {
    INFO("--expires-in " << window);
    const auto r = getcert_at(server.port(), {"--expires-in", window});
    INFO(explain(r));
    CHECK(r.exit_code == kExitExpiring);
    CHECK(r.out == read_file(pki("expiring-chain.pem")));  // the chain is still delivered
    CHECK_THAT(r.err, Contains("certificate 'expiring.test' expires in " + std::to_string(days) +
                               " days") &&
                          Contains("within --expires-in " + window));
  }
  for (const std::string& window : std::vector<std::string>{"1d", hours_less, "0"}) {
    INFO("--expires-in " << window);
    const auto r = getcert_at(server.port(), {"--expires-in", window});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK(r.err.empty());
  }
  SECTION("a long-lived chain passes a 30-day window") {
    const auto rsa = getcert::test::start_openssl_server(pki_chain("rsa"));
    const auto r = getcert_at(rsa.port(), {"--expires-in", "30d"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
  }
}

TEST_CASE("invalid --expires-in, --at or --pin: exit 2 and nothing is sent", "[cli]") {
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  const std::vector<std::vector<std::string>> cases = {
      {"--expires-in", "3x"},
      {"--expires-in", "-1d"},
      {"--expires-in", "soon"},
      {"--at", "next tuesday"},
      {"--at", "2027-03-01T00:00:00"},  // no zone
      {"--pin", "sha256/abc"},
      {"--pin", "sha1/QBfj9olCeDn+kfoWxdbnBzJt4fTqvV5cgv6mBNhg/FQ="},
      {"--pin", "QBfj9olCeDn+kfoWxdbnBzJt4fTqvV5cgv6mBNhg/FQ="},
  };
  for (const auto& extra : cases) {
    INFO(extra[0] << " " << extra[1]);
    const auto r = getcert_at(peer.port(), extra, "127.0.0.1");
    INFO(explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("getcert: error:") && Contains(extra[1]));
  }
  CHECK(peer.connections_settled() == 0);
}

TEST_CASE("verification time: --at far ahead is expired, --at after notBefore makes notyet valid",
          "[cli]") {
  REQUIRE_OPENSSL();
  const auto rsa = getcert::test::start_openssl_server(pki_chain("rsa"));
  const auto far = getcert_at(rsa.port(), {"--at", "2100-01-01T00:00:00Z", "-o", "json"});
  INFO(explain(far));
  CHECK(far.exit_code == kExitVerify);
  CHECK(codes_of(parse_json(far.out).at("verification")).at(0) == "expired");
  CHECK_THAT(far.err, Contains("certificate 'rsa.test' expired"));

  const auto notyet = getcert::test::start_openssl_server(pki_chain("notyet"));
  const auto now = getcert_at(notyet.port(), {"-o", "json"});
  INFO(explain(now));
  CHECK(now.exit_code == kExitVerify);
  CHECK(codes_of(parse_json(now.out).at("verification")) ==
        std::vector<std::string>{"not_yet_valid"});
  const auto certs = getcert::parse_certificates_pem(read_file(pki("notyet.pem")));
  REQUIRE(certs);
  const std::string later = getcert::format_utc(certs->front().not_before + 86400);
  const auto then = getcert_at(notyet.port(), {"--at", later});
  INFO("--at " << later << ": " << explain(then));
  CHECK(then.exit_code == kExitOk);
  CHECK(then.out == read_file(pki("notyet-chain.pem")));
  const std::string before = getcert::format_utc(certs->front().not_before - 60);
  CHECK(getcert_at(notyet.port(), {"--at", before}).exit_code == kExitVerify);
}

// ---- pins
// -----------------------------------------------------------------------------------------

TEST_CASE("SPKI pins: the leaf's or the intermediate's key passes --pin, another key fails",
          "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("rsa"));
  for (const char* cert : {"rsa.pem", "intermediate.pem"}) {
    INFO("pin of " << cert);
    const auto r = getcert_at(server.port(), {"--pin", openssl_pin(pki(cert))});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    CHECK(r.out == read_file(pki("rsa-chain.pem")));
  }
  const std::string other = openssl_pin(pki("ecdsa.pem"));
  const auto r = getcert_at(server.port(), {"--pin", other, "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  const Json v = parse_json(r.out).at("verification");
  CHECK(codes_of(v) == std::vector<std::string>{"pin_mismatch"});
  CHECK_THAT(r.err, Contains(other));
  const auto either =
      getcert_at(server.port(), {"--pin", other, "--pin", openssl_pin(pki("rsa.pem"))});
  CHECK(either.exit_code == kExitOk);
}

TEST_CASE("a --pin of 44 characters that are not base64 is a usage error, before any connection",
          "[cli]") {
  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  const std::string pin = "sha256/" + std::string(43, '!') + "=";
  const auto r = getcert_at(peer.port(), {"--pin", pin}, "127.0.0.1");
  INFO(explain(r));
  CHECK(r.exit_code == kExitUsage);
  CHECK(peer.connections_settled() == 0);
}

// ---- names
// -----------------------------------------------------------------------------------------

TEST_CASE("IDN: --sni in Unicode or punycode verifies, and the wire carries the A-label", "[cli]") {
  REQUIRE_OPENSSL();
  getcert::test::TempDir tmp;
  const auto idn =
      getcert::test::issue_leaf(tmp, "idn", "xn--bcher-kva.example", "DNS:xn--bcher-kva.example");
  const auto server = getcert::test::start_openssl_server(idn);
  const std::string unicode =
      "b\xC3\xBC"
      "cher.example";  // bücher.example
  for (const std::string& sni : {unicode, std::string("xn--bcher-kva.example")}) {
    INFO("--sni " << sni);
    const auto r = getcert_at(server.port(), {"--sni", sni, "-o", "json"}, "127.0.0.1");
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    const Json j = parse_json(r.out);
    CHECK(j.at("target").at("sni") == "xn--bcher-kva.example");
    CHECK(j.at("verification").at("verdict") == "valid");
  }
  const auto other = getcert_at(server.port(), {"--sni", "bucher.example"}, "127.0.0.1");
  CHECK(other.exit_code == kExitVerify);

  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  (void)getcert_at(peer.port(), {"--sni", unicode, "--timeout", "5s"}, "127.0.0.1");
  (void)getcert_at(peer.port(),
                   {"--sni",
                    "B\xC3\x9C"
                    "CHER.example.",
                    "--timeout", "5s"},
                   "127.0.0.1");
  const auto hellos = peer.client_hellos();
  REQUIRE(hellos.size() == 2);
  for (const auto& hello : hellos) {
    CHECK(getcert::test::sni_of_client_hello(hello) ==
          std::optional<std::string>("xn--bcher-kva.example"));
  }
}

TEST_CASE("a trailing dot: same name for verification, none on the wire", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("rsa"));
  const auto r = getcert_at(server.port(), {"-o", "json"}, "localhost.");
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  CHECK(parse_json(r.out).at("target").at("sni") == "localhost");

  HostilePeer peer(HostilePeer::Behavior::close_after_hello);
  (void)getcert_at(peer.port(), {"--timeout", "5s"}, "localhost.");
  const auto hellos = peer.client_hellos();
  REQUIRE(hellos.size() == 1);
  CHECK(getcert::test::sni_of_client_hello(hellos[0]) == std::optional<std::string>("localhost"));
}

TEST_CASE("wildcards: one label only, never the bare domain, never an IP", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("wildcard"));
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string code;
  };
  const std::vector<Case> cases = {
      {{"--sni", "x.wild.test"}, kExitOk, ""},
      {{"--sni", "X.Wild.Test"}, kExitOk, ""},
      {{"--sni", "wild.test"}, kExitVerify, "hostname_mismatch"},
      {{"--sni", "a.b.wild.test"}, kExitVerify, "hostname_mismatch"},
      {{}, kExitVerify, "ip_mismatch"},  // 127.0.0.1, no SNI: the default certificate
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"-o", "json"});
    const auto r = getcert_at(server.port(), args, "127.0.0.1");
    INFO(explain(r));
    CHECK(r.exit_code == c.exit_code);
    const Json v = parse_json(r.out).at("verification");
    if (c.code.empty()) {
      CHECK(v.at("ok") == true);
    } else {
      CHECK(v.at("hostname_ok") == false);
      CHECK(v.at("trusted") == true);
      CHECK(codes_of(v) == std::vector<std::string>{c.code});
    }
  }
}

TEST_CASE("IP targets match IP SANs only", "[cli]") {
  REQUIRE_OPENSSL();
  getcert::test::TempDir tmp;
  const auto dns_ip = getcert::test::issue_leaf(tmp, "dnsip", "127.0.0.1",
                                                "DNS:127.0.0.1, DNS:*.0.0.1, DNS:localhost");
  struct Case {
    std::string name;
    getcert::test::ServedChain served;
    std::string host;
    int exit_code;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"rsa (IP SANs)", pki_chain("rsa"), "127.0.0.1", kExitOk, ""},
      {"ipsan", pki_chain("ipsan"), "127.0.0.1", kExitOk, ""},
      {"wronghost (DNS only)", pki_chain("wronghost"), "127.0.0.1", kExitVerify,
       "it has no IP address SANs"},
      {"DNS SANs spelling an IP", dns_ip, "127.0.0.1", kExitVerify, "IP mismatch"},
      {"ipsan by name", pki_chain("ipsan"), "localhost", kExitVerify, "name mismatch"},
  };
  for (const auto& c : cases) {
    INFO(c.name << " at " << c.host);
    const auto server = getcert::test::start_openssl_server(c.served);
    const auto r = getcert_at(server.port(), {}, c.host);
    INFO(explain(r));
    CHECK(r.exit_code == c.exit_code);
    if (!c.reason.empty()) CHECK_THAT(r.err, Contains(c.reason));
  }
}

// ---- policy, chain issues, CT and must-staple, against real servers --------------------------

namespace {

std::vector<std::string> note_codes(const Json& notes) {
  std::vector<std::string> out;
  for (const auto& n : notes) out.push_back(n.at("code").get<std::string>());
  return out;
}

// A PEM file of the PKI's certificates, in the order given: what a server is told to send.
getcert::test::ServedChain served_as(getcert::test::TempDir& tmp, const std::string& stem,
                                     const std::vector<std::string>& certs) {
  std::string text;
  for (const auto& c : certs) text += read_file(pki(c + ".pem"));
  getcert::test::write_file(tmp / (stem + ".pem"), text);
  return {tmp / (stem + ".pem"), pki(certs.front() + ".key")};
}

}  // namespace

TEST_CASE("chain issues a server admin can act on, from what s_server -cert_chain sends", "[cli]") {
  REQUIRE_OPENSSL();
  struct Case {
    std::vector<std::string> sent;
    std::string code;
    Json depth;
    int exit_code;
  };
  const std::vector<Case> cases{
      {{"ecdsa", "intermediate", "root"}, "root_sent", 2, kExitOk},
      {{"ecdsa", "root", "intermediate"}, "out_of_order", 1, kExitOk},
      {{"ecdsa", "intermediate", "intermediate"}, "duplicate", 2, kExitOk},
      {{"ecdsa", "intermediate", "untrusted-root"}, "unrelated", 2, kExitOk},
      {{"ecdsa", "intermediate", "expired"}, "expired_unneeded", 2, kExitOk},
      {{"ecdsa"}, "missing_intermediate", nullptr, kExitVerify},
  };
  getcert::test::TempDir tmp;
  int n = 0;
  for (const auto& c : cases) {
    INFO("expect " << c.code);
    const auto server =
        getcert::test::start_openssl_server(served_as(tmp, "sent" + std::to_string(++n), c.sent));
    const auto r = getcert_at(server.port(), {"--no-fetch-missing", "-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == c.exit_code);
    const Json j = parse_json(r.out);
    REQUIRE(j.at("presented_chain").size() == c.sent.size());
    const Json& issues = j.at("verification").at("chain_issues");
    const auto found = std::find_if(issues.begin(), issues.end(),
                                    [&](const Json& i) { return i.at("code") == c.code; });
    REQUIRE(found != issues.end());
    CHECK(found->at("depth") == c.depth);
    CHECK_FALSE(found->at("message").get<std::string>().empty());
    // Issues are warnings: a chain that is otherwise fine still verifies.
    CHECK(j.at("verification").at("ok") == (c.exit_code == kExitOk));

    const auto text = getcert_at(server.port(), {"--no-fetch-missing", "-o", "text"});
    CHECK_THAT(text.out, Contains("Chain issues") && Contains(c.code + ": "));
  }
  const auto good = getcert::test::start_openssl_server(pki_chain("ecdsa"));
  const auto r = getcert_at(good.port(), {"-o", "json"});
  CHECK(parse_json(r.out).at("verification").at("chain_issues") == Json::array());
}

TEST_CASE("select fullchain prints what the server should send, even when AIA completed it",
          "[cli]") {
  REQUIRE_OPENSSL();
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto leaf_only = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = getcert_at(leaf_only.port(), {"--select", "fullchain"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);  // the verdict is still valid_only_with_aia_fetch
  CHECK(r.out == read_file(pki("rsa-chain.pem")));
  CHECK_THAT(r.err, Contains("fetched from " + kAiaUrl));

  SECTION("a server that sends its root and scrambles the order gets the clean chain back") {
    getcert::test::TempDir tmp;
    const auto messy = getcert::test::start_openssl_server(
        served_as(tmp, "messy", {"rsa", "root", "intermediate"}));
    const auto fixed = getcert_at(messy.port(), {"--select", "fullchain"});
    INFO(explain(fixed));
    CHECK(fixed.exit_code == kExitOk);
    CHECK(fixed.out == read_file(pki("rsa-chain.pem")));
  }
  SECTION("nothing verified: nothing printed, exit 5") {
    const auto untrusted = getcert::test::start_openssl_server(pki_chain("untrusted"));
    const auto none = getcert_at(untrusted.port(), {"--select", "fullchain"});
    INFO(explain(none));
    CHECK(none.exit_code == kExitVerify);
    CHECK(none.out.empty());
  }
}

TEST_CASE(
    "fetch accepts --fetch-missing, as show does; with --no-fetch-missing it is a usage error",
    "[cli]") {
  REQUIRE_OPENSSL();
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  const auto server = getcert::test::start_openssl_server(pki_leaf_only("rsa"));
  const auto r = getcert_at(server.port(), {"--fetch-missing", "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(parse_json(r.out).at("verification").at("verdict") == "valid_only_with_aia_fetch");
  const auto both = getcert_at(server.port(), {"--fetch-missing", "--no-fetch-missing"});
  CHECK(both.exit_code == kExitUsage);
}

TEST_CASE("names: no CN fallback when the leaf has SANs; cn_fallback warning without any",
          "[cli]") {
  REQUIRE_OPENSSL();
  getcert::test::TempDir tmp;
  const auto ip_only = getcert::test::start_openssl_server(
      getcert::test::issue_leaf(tmp, "ipcn", "good.test", "IP:127.0.0.1"));
  const auto r = getcert_at(ip_only.port(), {"--sni", "good.test", "-o", "json"});
  INFO(explain(r));
  CHECK(r.exit_code == kExitVerify);
  CHECK(codes_of(parse_json(r.out).at("verification")) ==
        std::vector<std::string>{"hostname_mismatch"});

  getcert::test::LeafSpec nosan;
  nosan.cn = "good.test";
  const auto cn_only =
      getcert::test::start_openssl_server(getcert::test::issue_leaf(tmp, "nosan", nosan));
  const auto fallback =
      getcert_at(cn_only.port(), {"--sni", "good.test", "--profile", "openssl", "-o", "json"});
  INFO(explain(fallback));
  CHECK(fallback.exit_code == kExitOk);
  const Json v = parse_json(fallback.out).at("verification");
  CHECK(note_codes(v.at("warnings")) == std::vector<std::string>{"cn_fallback"});
  CHECK(v.at("warnings")[0].at("depth") == 0);
  CHECK(v.at("profile") == "openssl");
  CHECK_THAT(fallback.err, Contains("warning") && Contains("subject CN"));

  // The default profile, webpki, has no CN fallback and says which profile accepts the leaf.
  const auto webpki = getcert_at(cn_only.port(), {"--sni", "good.test", "-o", "json"});
  INFO(explain(webpki));
  CHECK(webpki.exit_code == kExitVerify);
  const Json w = parse_json(webpki.out).at("verification");
  CHECK(w.at("profile") == "webpki");
  CHECK(w.at("profile_ok") == false);
  CHECK(codes_of(w) == std::vector<std::string>{"no_subject_alt_name"});
  REQUIRE(w.at("accepted_by").size() == 1);
  CHECK(w.at("accepted_by")[0].at("profile") == "openssl");
  CHECK_THAT(webpki.err,
             Contains("note") && Contains("--profile openssl") && Contains("through the CN"));
}

TEST_CASE("verification inputs: bad values are usage errors with one line", "[cli]") {
  REQUIRE_OPENSSL();
  const std::string chain = getcert::test::pki("ecdsa-chain.pem");
  const std::string ca = getcert::test::pki("ca-bundle.pem");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--profile", "strictest"},
                                             {"--max-depth", "-1"},
                                             {"--max-depth", "many"},
                                             {"--host", ""},
                                             {"--host", "*.example.com"},
                                             {"--email", "nobody"},
                                             {"--crl-file", "/nonexistent/crl.pem"}}) {
    std::vector<std::string> args{"show", chain, "--verify", "--ca-file", ca};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = getcert::test::run_getcert(args);
    INFO(bad[0] << " " << bad[1] << "\n" << explain(r));
    CHECK(r.exit_code == kExitUsage);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Contains(bad[0]));
  }
  const auto ok = getcert::test::run_getcert({"show", chain, "--verify", "--ca-file", ca, "--host",
                                              "other.test", "--host", "ecdsa.test", "--max-depth",
                                              "1", "--profile", "rfc5280"});
  INFO(explain(ok));
  CHECK(ok.exit_code == kExitOk);
}

TEST_CASE("weak leaves fail with too_weak and exit 5", "[cli]") {
  REQUIRE_OPENSSL();
  getcert::test::TempDir tmp;
  getcert::test::LeafSpec sha1;
  sha1.cn = "localhost";
  sha1.san = "DNS:localhost";
  sha1.digest = "sha1";
  getcert::test::LeafSpec rsa1024 = sha1;
  rsa1024.digest = "sha256";
  rsa1024.key_args = {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"};
  int n = 0;
  for (const auto& spec : {sha1, rsa1024}) {
    // s_server itself refuses to load such a certificate at its default security level.
    getcert::test::OpenSslServerOptions o;
    o.served = getcert::test::issue_leaf(tmp, "weak" + std::to_string(++n), spec);
    o.extra_args = {"-cipher", "DEFAULT:@SECLEVEL=0"};
    const auto server = getcert::test::start_openssl_server(o);
    const auto r = getcert_at(server.port(), {"-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    CHECK(codes_of(parse_json(r.out).at("verification")) == std::vector<std::string>{"too_weak"});
  }
}

TEST_CASE("at notAfter exactly verification passes, one second later is expired", "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("expiring"));
  const auto leaf = getcert::parse_certificates_pem(read_file(pki("expiring.pem")));
  REQUIRE(leaf);
  const std::int64_t not_after = leaf->front().not_after;
  const auto at_end = getcert_at(server.port(), {"--at", getcert::format_utc(not_after)});
  INFO(explain(at_end));
  CHECK(at_end.exit_code == kExitOk);
  const auto after =
      getcert_at(server.port(), {"--at", getcert::format_utc(not_after + 1), "-o", "json"});
  INFO(explain(after));
  CHECK(after.exit_code == kExitVerify);
  CHECK(codes_of(parse_json(after.out).at("verification")) == std::vector<std::string>{"expired"});
}

TEST_CASE("an intermediate as the only --ca-file verifies, and the report names it the anchor",
          "[cli]") {
  REQUIRE_OPENSSL();
  const auto server = getcert::test::start_openssl_server(pki_chain("ecdsa"));
  const std::vector<std::string> args{at("localhost", server.port()), "--ca-file",
                                      pki("intermediate.pem")};
  const auto r = run_getcert(plus(args, {"-o", "json"}));
  INFO(explain(r));
  CHECK(r.exit_code == kExitOk);
  const Json j = parse_json(r.out);
  const Json& v = j.at("verification");
  CHECK(v.at("verdict") == "valid");
  CHECK(v.at("trust_anchor") == kIntermediate);
  CHECK(j.at("verified_chain").size() == 2);
  CHECK(note_codes(v.at("warnings")) == std::vector<std::string>{"anchor_not_self_signed"});

  const auto text = run_getcert(plus(args, {"-o", "text"}));
  CHECK_THAT(text.out, Contains("[1] " + kIntermediate + "  (trust anchor)"));
  CHECK_THAT(text.out, Contains("anchor_not_self_signed"));

  const auto root = run_getcert(plus(args, {"--select", "root"}));
  CHECK(root.exit_code == kExitOk);
  CHECK(root.out == read_file(pki("intermediate.pem")));
}

TEST_CASE("must-staple: without a staple exit 5 must_staple_missing, with one verified; SCTs shown",
          "[cli]") {
  REQUIRE_OPENSSL();
  getcert::test::TempDir tmp;
  getcert::test::TestSct sct;
  sct.log_id.fill(0x11);
  sct.timestamp_ms = 1767225600123;
  const auto served = getcert::test::issue_must_staple_leaf(tmp, "staple", "localhost", {sct});

  SECTION("no staple") {
    const auto server = getcert::test::start_openssl_server(served);
    const auto r = getcert_at(server.port(), {"-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitVerify);
    const Json j = parse_json(r.out);
    CHECK(codes_of(j.at("verification")) == std::vector<std::string>{"must_staple_missing"});
    const Json& leaf = j.at("presented_chain")[0];
    CHECK(leaf.at("must_staple") == true);
    REQUIRE(leaf.at("scts").size() == 1);
    CHECK(leaf.at("scts")[0].at("version") == 0);
    CHECK(leaf.at("scts")[0].at("log_id") == "ERERERERERERERERERERERERERERERERERERERERERE=");
    CHECK(leaf.at("scts")[0].at("timestamp") == "2026-01-01T00:00:00.123Z");
    CHECK(leaf.at("scts")[0].at("signature_algorithm") == "ecdsa-with-SHA256");
    CHECK(j.at("presented_chain")[1].at("scts") == Json::array());
    CHECK(j.at("presented_chain")[1].at("must_staple") == false);
    const auto text = getcert_at(server.port(), {"-o", "text"});
    CHECK_THAT(text.out, Contains("Must-staple: yes") && Contains("SCT:        log ERERERER") &&
                             Contains("2026-01-01T00:00:00.123Z"));
  }
  SECTION("a good staple from the intermediate's responder") {
    // The responder's database knows the leaf (serial 51ED) as valid.
    const auto leaf = getcert::parse_certificates_pem(read_file(tmp / "staple.pem"));
    REQUIRE(leaf);
    std::string index_date;  // YYMMDDHHMMSSZ, as openssl ca writes it
    for (const char ch : getcert::format_utc(leaf->front().not_after).substr(2)) {
      if (ch >= '0' && ch <= '9') index_date += ch;
    }
    index_date += 'Z';
    getcert::test::write_file(tmp / "index.txt",
                              "V\t" + index_date + "\t\t51ED\tunknown\t/CN=localhost\n");
    getcert::test::openssl({"ocsp", "-issuer", pki("intermediate.pem"), "-cert", tmp / "staple.pem",
                            "-no_nonce", "-reqout", tmp / "req.der"});
    getcert::test::openssl({"ocsp", "-index", tmp / "index.txt", "-CA", pki("intermediate.pem"),
                            "-rsigner", pki("intermediate.pem"), "-rkey", pki("intermediate.key"),
                            "-reqin", tmp / "req.der", "-respout", tmp / "resp.der", "-ndays",
                            "7"});
    getcert::test::OpenSslServerOptions o;
    o.served = served;
    o.extra_args = {"-status_file", tmp / "resp.der"};
    const auto server = getcert::test::start_openssl_server(o);
    const auto r = getcert_at(server.port(), {"-o", "json"});
    INFO(explain(r));
    CHECK(r.exit_code == kExitOk);
    const Json j = parse_json(r.out);
    CHECK(j.at("tls").at("ocsp_stapled") == true);
    CHECK(j.at("verification").at("revocation")[0].at("status") == "good");
  }
}
