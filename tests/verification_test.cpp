// verify_chain beyond the offline basics: completing a chain from the AIA URL (served in every
// container format a CA uses), the store-filled gap, stapled OCSP responses judged against
// `openssl ocsp` as the oracle, SPKI pins computed with the openssl pipeline, and the names
// a user types (IDN, trailing dot, wildcards, IP literals).
//
// Runs an HTTP server on the PKI's fixed AIA port 18080: every case here holds the ctest
// RESOURCE_LOCK pki_fixed_ports (tests/CMakeLists.txt).

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/fetch.hpp"
#include "getcert/verify.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/http_server.hpp"
#include "support/issued_leaf.hpp"
#include "support/process.hpp"
#include "support/test_pki.hpp"

using Catch::Matchers::Contains;
using getcert::Certificate;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::test::HttpServer;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::verify_trusting_test_root;
using namespace std::chrono_literals;

namespace {

const std::string kIntermediate = "CN=getcert Test Intermediate CA,O=getcert tests";
const std::string kRoot = "CN=getcert Test Root CA,O=getcert tests";
const std::string kAiaUrl = "http://127.0.0.1:18080/intermediate.der";

std::vector<Certificate> load(const std::string& path) {
  auto certs = getcert::parse_certificates_pem(read_file(path));
  if (!certs) FAIL(path << ": " << certs.error().message);
  return *certs;
}

Verification verify(const std::vector<Certificate>& chain, const VerifyOptions& options) {
  auto v = getcert::verify_chain(chain, options);
  if (!v) FAIL("verify_chain failed: " << v.error().message);
  return *v;
}

std::string describe(const Verification& v) {
  std::string out = "verdict " + std::string(getcert::to_string(v.verdict)) + "\n";
  for (const auto& e : v.errors) {
    out += "error [" + std::to_string(e.depth) + "] " + std::string(getcert::to_string(e.code)) +
           ": " + e.reason + "\n";
  }
  for (const auto& w : v.warnings) out += "warning: " + w.message + "\n";
  for (const auto& r : v.revocation) {
    out += "revocation [" + std::to_string(r.depth) + "] " + std::string(to_string(r.source)) +
           " " + std::string(getcert::to_string(r.status)) + " " + r.detail + "\n";
  }
  return out;
}

std::string bytes_of(const std::vector<std::uint8_t>& v) { return {v.begin(), v.end()}; }
std::vector<std::uint8_t> vec_of(const std::string& s) { return {s.begin(), s.end()}; }

// The intermediate as a CA's web server may publish it at its caIssuers URL.
std::string intermediate_as(const std::string& form) {
  if (form == "DER") return read_file(pki("intermediate.der"));
  if (form == "PEM") return read_file(pki("intermediate.pem"));
  if (form == "PKCS#7 DER") {
    return getcert::test::openssl(
        {"crl2pkcs7", "-nocrl", "-certfile", pki("intermediate.pem"), "-outform", "DER"});
  }
  return getcert::test::openssl({"crl2pkcs7", "-nocrl", "-certfile", pki("intermediate.pem")});
}

// `openssl x509 -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary |
// base64`, the pipeline HPKP and curl --pinnedpubkey documentation give.
std::string openssl_pin(const std::string& cert) {
  const auto r = getcert::test::run_shell(
      std::string(GETCERT_TEST_OPENSSL) + " x509 -in '" + cert + "' -pubkey -noout | " +
      GETCERT_TEST_OPENSSL + " pkey -pubin -outform DER | " + GETCERT_TEST_OPENSSL +
      " dgst -sha256 -binary | " + GETCERT_TEST_OPENSSL + " base64 -A");
  REQUIRE(r.exit_code == 0);
  return "sha256/" + r.out;
}

// What `openssl ocsp -respin` says about `cert` in a stapled response: good, revoked, unknown,
// or "error" when the response does not verify against the test root or does not cover cert.
std::string openssl_ocsp_status(const std::string& response, const std::string& cert) {
  const auto r =
      getcert::test::run({GETCERT_TEST_OPENSSL, "ocsp", "-respin", response, "-CAfile",
                          pki("root.pem"), "-issuer", pki("intermediate.pem"), "-cert", cert});
  if (r.err.find("Response verify OK") == std::string::npos) return "error";
  for (const char* status : {"good", "revoked", "unknown"}) {
    if (r.out.find(cert + ": " + status) != std::string::npos) return status;
  }
  return "error";
}

}  // namespace

TEST_CASE("parse_certificates reads an intermediate as DER, PEM and PKCS#7 (DER and PEM)",
          "[verify]") {
  const std::string der = read_file(pki("intermediate.der"));
  for (const std::string form : {"DER", "PEM", "PKCS#7 DER", "PKCS#7 PEM"}) {
    INFO("form: " << form);
    const auto certs = getcert::parse_certificates(vec_of(intermediate_as(form)));
    REQUIRE(certs);
    REQUIRE(certs->size() == 1);
    CHECK(certs->front().subject == kIntermediate);
    CHECK(bytes_of(certs->front().der) == der);
  }
  SECTION("a PKCS#7 bundle keeps every certificate, in order") {
    getcert::test::TempDir tmp;
    getcert::test::write_file(tmp / "both.pem",
                              read_file(pki("intermediate.pem")) + read_file(pki("root.pem")));
    const auto p7 = getcert::test::openssl(
        {"crl2pkcs7", "-nocrl", "-certfile", tmp / "both.pem", "-outform", "DER"});
    const auto certs = getcert::parse_certificates(vec_of(p7));
    REQUIRE(certs);
    REQUIRE(certs->size() == 2);
    CHECK(certs->at(0).subject == kIntermediate);
    CHECK(certs->at(1).subject == kRoot);
  }
  SECTION("bytes that are none of these are malformed_input") {
    const auto bad = getcert::parse_certificates(vec_of("<html>404 Not Found</html>"));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == getcert::Errc::malformed_input);
  }
}

TEST_CASE("a leaf without its intermediate and no AIA server: invalid, naming the CA and URL",
          "[verify]") {
  auto o = verify_trusting_test_root();
  o.fetch_missing = true;
  const auto v = verify(load(pki("rsa.pem")), o);
  INFO(describe(v));
  CHECK(v.verdict == getcert::Verdict::invalid);
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  CHECK(v.fetched_intermediates.empty());
  CHECK(v.verified_chain.empty());
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0].depth == 0);
  CHECK(v.errors[0].code == getcert::ProblemCode::missing_intermediate);
  CHECK_THAT(v.errors[0].reason, Contains("'getcert Test Intermediate CA'") && Contains(kAiaUrl));
  REQUIRE(v.warnings.size() == 1);
  CHECK_THAT(v.warnings[0].message, Contains("cannot connect") && Contains("127.0.0.1:18080"));
}

TEST_CASE("the AIA URL completes the chain whatever container it serves", "[verify]") {
  const std::string form = GENERATE(as<std::string>{}, "DER", "PEM", "PKCS#7 DER", "PKCS#7 PEM");
  INFO("served as " << form);
  HttpServer http;
  http.serve("/intermediate.der", intermediate_as(form));
  auto o = verify_trusting_test_root();
  o.fetch_missing = true;
  const auto v = verify(load(pki("rsa.pem")), o);
  INFO(describe(v));
  CHECK(v.verdict == getcert::Verdict::valid_only_with_aia_fetch);
  CHECK_FALSE(v.ok);  // most non-browser clients would fail against this server
  CHECK(v.trusted);
  CHECK(v.hostname_ok);
  REQUIRE(v.fetched_intermediates.size() == 1);
  CHECK(v.fetched_intermediates[0].subject == kIntermediate);
  REQUIRE(v.verified_chain.size() == 3);
  CHECK(v.verified_chain[1].subject == kIntermediate);
  CHECK(v.verified_chain[2].pem() == read_file(pki("root.pem")));
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0].code == getcert::ProblemCode::missing_intermediate);
  CHECK_THAT(v.errors[0].reason,
             Contains("'getcert Test Intermediate CA'") && Contains("fetched from " + kAiaUrl));
  CHECK(v.warnings.empty());
  CHECK(http.requests() == std::vector<std::string>{"GET /intermediate.der"});
}

TEST_CASE(
    "fetch_missing off, the library's default: no HTTP request at all, the verdict stays "
    "invalid",
    "[verify]") {
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  // Off unless asked, as in Go and webpki: the URL comes from the certificate being judged.
  CHECK_FALSE(getcert::VerifyOptions{}.fetch_missing);
  CHECK_FALSE(getcert::FetchOptions{}.verify.fetch_missing);
  auto o = verify_trusting_test_root();
  o.fetch_missing = false;
  const auto v = verify(load(pki("rsa.pem")), o);
  INFO(describe(v));
  CHECK(http.connections_settled() == 0);
  CHECK(v.verdict == getcert::Verdict::invalid);
  CHECK(v.fetched_intermediates.empty());
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == getcert::ProblemCode::missing_intermediate);
  CHECK_THAT(v.errors[0].reason, Contains("browsers will fetch it from " + kAiaUrl));
}

TEST_CASE("an intermediate found only in the trust store: incomplete_chain, said plainly",
          "[verify]") {
  getcert::test::TempDir tmp;
  getcert::test::write_file(tmp / "bundle.pem",
                            read_file(pki("root.pem")) + read_file(pki("intermediate.pem")));
  HttpServer http;
  http.serve("/intermediate.der", read_file(pki("intermediate.der")));
  auto o = verify_trusting_test_root();
  o.trust.ca_file = tmp / "bundle.pem";
  o.fetch_missing = true;
  const auto v = verify(load(pki("rsa.pem")), o);
  INFO(describe(v));
  CHECK(v.verdict == getcert::Verdict::incomplete_chain);
  CHECK_FALSE(v.ok);
  CHECK(v.trusted);
  CHECK(v.verified_chain.size() == 3);
  CHECK(v.fetched_intermediates.empty());
  CHECK(http.connections_settled() == 0);  // the store already had it: nothing to download
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0].depth == 1);
  CHECK(v.errors[0].code == getcert::ProblemCode::missing_intermediate);
  CHECK_THAT(v.errors[0].reason, Contains("'getcert Test Intermediate CA'") &&
                                     Contains("found only in the local trust store"));
}

TEST_CASE("an AIA URL that serves something else, or nothing: a warning, verdict invalid",
          "[verify]") {
  auto o = verify_trusting_test_root();
  o.fetch_missing = true;
  SECTION("an HTML page") {
    HttpServer http;
    http.serve("/intermediate.der", "<html><body>moved</body></html>");
    const auto v = verify(load(pki("rsa.pem")), o);
    INFO(describe(v));
    CHECK(v.verdict == getcert::Verdict::invalid);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0].message, Contains(kAiaUrl) && Contains("did not serve a certificate"));
  }
  SECTION("404") {
    HttpServer http;
    const auto v = verify(load(pki("rsa.pem")), o);
    INFO(describe(v));
    CHECK(v.verdict == getcert::Verdict::invalid);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0].message, Contains("fetching the issuer of 'rsa.test' failed"));
    CHECK(http.requests() == std::vector<std::string>{"GET /intermediate.der"});
  }
  SECTION("the wrong certificate (the root instead of the intermediate)") {
    HttpServer http;
    http.serve("/intermediate.der", read_file(pki("root.pem")));
    const auto v = verify(load(pki("rsa.pem")), o);
    INFO(describe(v));
    CHECK(v.verdict == getcert::Verdict::invalid);
    CHECK_FALSE(v.trusted);
    CHECK(v.verified_chain.empty());
  }
}

TEST_CASE("a stalled AIA server costs at most the network timeout", "[verify]") {
  HttpServer http(getcert::test::kPkiHttpPort, HttpServer::Behavior::silent);
  auto o = verify_trusting_test_root();
  o.fetch_missing = true;
  o.network_timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  const auto v = verify(load(pki("rsa.pem")), o);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  INFO(describe(v) << "elapsed ms: "
                   << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count());
  CHECK(elapsed >= 900ms);
  CHECK(elapsed <= 3s);
  CHECK(v.verdict == getcert::Verdict::invalid);
  REQUIRE(v.warnings.size() == 1);
  CHECK_THAT(v.warnings[0].message, Contains("timed out"));
}

TEST_CASE("stapled OCSP responses: the status openssl ocsp reads, and what it means", "[verify]") {
  struct Case {
    std::string leaf;
    std::string staple;
    std::string status;
    std::string error_code;  // "" = verification ok
  };
  const std::vector<Case> cases = {
      {"good", "good-ocsp.der", "good", ""},
      {"revoked", "revoked-ocsp.der", "revoked", "revoked"},
      {"unknown", "unknown-ocsp.der", "unknown", ""},
      {"good", "wrongkey-ocsp.der", "error", "bad_ocsp_staple"},
      // A valid response about another certificate proves nothing about this one.
      {"revoked", "good-ocsp.der", "error", "bad_ocsp_staple"},
  };
  for (const auto& c : cases) {
    INFO(c.leaf << " with " << c.staple);
    auto o = verify_trusting_test_root();
    o.ocsp_staple = vec_of(read_file(pki(c.staple)));
    const auto v = verify(load(pki(c.leaf + "-chain.pem")), o);
    INFO(describe(v));
    CHECK(openssl_ocsp_status(pki(c.staple), pki(c.leaf + ".pem")) == c.status);
    REQUIRE(v.revocation.size() == 1);
    CHECK(v.revocation[0].depth == 0);
    CHECK(v.revocation[0].source == getcert::RevocationSource::ocsp_staple);
    CHECK(getcert::to_string(v.revocation[0].status) == c.status);
    if (c.error_code.empty()) {
      CHECK(v.ok);
      CHECK(v.verdict == getcert::Verdict::valid);
    } else {
      CHECK_FALSE(v.ok);
      CHECK(v.verdict == getcert::Verdict::invalid);
      REQUIRE(v.errors.size() == 1);
      CHECK(getcert::to_string(v.errors[0].code) == c.error_code);
    }
    if (c.status == "revoked") {
      CHECK(v.revocation[0].detail == "keyCompromise");
      CHECK(v.revocation[0].revoked_at.has_value());
      CHECK_THAT(v.errors[0].reason, Contains("revoked") && Contains("keyCompromise"));
    }
    if (c.status == "unknown") {
      REQUIRE(v.warnings.size() == 1);
      CHECK_THAT(v.warnings[0].message, Contains("does not know this certificate"));
    }
  }
}

TEST_CASE("SPKI pins computed with the openssl pipeline", "[verify]") {
  const auto chain = load(pki("rsa-chain.pem"));
  for (const char* cert : {"rsa.pem", "intermediate.pem", "root.pem"}) {
    INFO("pin of " << cert);
    auto o = verify_trusting_test_root();
    o.pins = {openssl_pin(pki(cert))};
    const auto v = verify(chain, o);
    INFO(describe(v));
    CHECK(v.ok);
  }
  SECTION("a pin of another key fails with pin_mismatch, even among good certificates") {
    auto o = verify_trusting_test_root();
    const std::string other = openssl_pin(pki("ecdsa.pem"));
    o.pins = {other};
    const auto v = verify(chain, o);
    INFO(describe(v));
    CHECK_FALSE(v.ok);
    CHECK(v.verdict == getcert::Verdict::invalid);
    REQUIRE(v.errors.size() == 1);
    CHECK(v.errors[0].code == getcert::ProblemCode::pin_mismatch);
    CHECK_THAT(v.errors[0].reason, Contains(other));
    o.pins.push_back(openssl_pin(pki("intermediate.pem")));
    CHECK(verify(chain, o).ok);  // any one pin matching is enough
  }
}

TEST_CASE("names as users type them", "[verify]") {
  getcert::test::TempDir tmp;
  const auto idn =
      getcert::test::issue_leaf(tmp, "idn", "xn--bcher-kva.example",
                                "DNS:xn--bcher-kva.example, DNS:*.xn--bcher-kva.example");
  const auto idn_chain = load(idn.chain_pem_file);
  auto check = [](const std::vector<Certificate>& chain, const std::string& name,
                  const std::string& code) {
    INFO("name: " << name);
    const auto v = verify(chain, verify_trusting_test_root(name));
    INFO(describe(v));
    if (code.empty()) {
      CHECK(v.ok);
      CHECK(v.hostname_ok);
    } else {
      CHECK_FALSE(v.ok);
      CHECK_FALSE(v.hostname_ok);
      CHECK(v.trusted);  // a name problem never hides or fakes a chain problem
      REQUIRE_FALSE(v.errors.empty());
      CHECK(getcert::to_string(v.errors[0].code) == code);
    }
  };
  SECTION("IDN: U-label, A-label and case all match the A-label SAN") {
    check(idn_chain, "xn--bcher-kva.example", "");
    check(idn_chain,
          "b\xC3\xBC"
          "cher.example",
          "");  // bücher.example
    check(idn_chain,
          "B\xC3\x9C"
          "CHER.EXAMPLE",
          "");  // BÜCHER.EXAMPLE
    check(idn_chain,
          "www.b\xC3\xBC"
          "cher.example",
          "");  // wildcard, one label
    check(idn_chain,
          "a.b.b\xC3\xBC"
          "cher.example",
          "hostname_mismatch");
    check(idn_chain, "bucher.example", "hostname_mismatch");
  }
  SECTION("a trailing dot is the same name") {
    check(load(pki("rsa-chain.pem")), "localhost.", "");
    check(idn_chain,
          "b\xC3\xBC"
          "cher.example.",
          "");
  }
  SECTION("a wildcard covers exactly one label, never the bare domain") {
    const auto wildcard = load(pki("wildcard-chain.pem"));
    check(wildcard, "x.wild.test", "");
    check(wildcard, "wild.test", "hostname_mismatch");
    check(wildcard, "a.b.wild.test", "hostname_mismatch");
    check(wildcard, "127.0.0.1", "ip_mismatch");
  }
  SECTION("an IP target matches only IP SANs, never DNS names that look like one") {
    const auto dns_ip =
        load(getcert::test::issue_leaf(tmp, "dnsip", "127.0.0.1", "DNS:127.0.0.1, DNS:*.0.0.1")
                 .chain_pem_file);
    check(dns_ip, "127.0.0.1", "ip_mismatch");
    check(load(pki("ipsan-chain.pem")), "127.0.0.1", "");
    check(load(pki("ipsan-chain.pem")), "::1", "");
    check(load(pki("ipsan-chain.pem")), "0:0:0:0:0:0:0:1", "");
    check(load(pki("ipsan-chain.pem")), "127.0.0.2", "ip_mismatch");
    check(load(pki("wronghost-chain.pem")), "127.0.0.1", "ip_mismatch");
  }
}

TEST_CASE("a stapled OCSP response is judged at the --at time, like the chain", "[verify]") {
  // As of a time after the staple's nextUpdate the staple is stale, even if it is fresh now.
  const auto staple = read_file(pki("good-ocsp.der"));
  auto o = verify_trusting_test_root();
  o.ocsp_staple = vec_of(staple);
  const auto now = verify(load(pki("good-chain.pem")), o);
  REQUIRE(now.revocation.size() == 1);
  REQUIRE(now.revocation[0].next_update.has_value());
  o.at_time =
      *now.revocation[0].next_update + std::int64_t{2} * 86400;  // still inside the leaf's validity
  const auto later = verify(load(pki("good-chain.pem")), o);
  INFO(describe(later));
  REQUIRE(later.revocation.size() == 1);
  CHECK(later.revocation[0].status == getcert::RevocationStatus::error);
  CHECK_FALSE(later.ok);
}

TEST_CASE("a name mismatch on a certificate with only IP SANs does not cite the CN as a name",
          "[verify]") {
  // With SANs present the CN is never used for matching (RFC 6125), so the reason omits it.
  const auto v = verify(load(pki("ipsan-chain.pem")), verify_trusting_test_root("localhost"));
  INFO(describe(v));
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == getcert::ProblemCode::hostname_mismatch);
  CHECK(v.errors[0].reason.find("(CN)") == std::string::npos);
}

TEST_CASE("a staple signed by the issuer or a responder it delegated to, whatever the anchor",
          "[verify]") {
  // The staple is judged against the verified chain: an intermediate trusted as the anchor
  // (--ca-file intermediate.pem) is the issuer, as a root-anchored chain's intermediate is.
  SECTION("the issuer signs; the anchor is the intermediate itself") {
    auto o = verify_trusting_test_root();
    o.trust.ca_file = pki("intermediate.pem");
    o.ocsp_staple = vec_of(read_file(pki("good-ocsp.der")));
    const auto v = verify(load(pki("good-chain.pem")), o);
    INFO(describe(v));
    REQUIRE(v.revocation.size() == 1);
    CHECK(v.revocation[0].status == getcert::RevocationStatus::good);
    CHECK(v.ok);
  }

  // Delegated responders (RFC 6960 4.2.2.2), made here with the test PKI's keys.
  getcert::test::TempDir dir;
  const std::string d = dir.path().string();
  auto responder = [&](const std::string& name, const std::string& ca, const std::string& eku) {
    const std::string ext = d + "/" + name + ".ext";
    getcert::test::write_file(
        ext, eku.empty() ? "basicConstraints=CA:FALSE\n"
                         : "basicConstraints=CA:FALSE\nextendedKeyUsage=" + eku + "\n");
    const auto made = getcert::test::run_shell(
        "set -e; cd " + d +
        "; openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes " +
        "-subj '/CN=" + name + "' -keyout " + name + ".key -out " + name + ".csr 2>/dev/null; " +
        "openssl x509 -req -in " + name + ".csr -CA " + pki(ca + ".pem") + " -CAkey " +
        pki(ca + ".key") + " -CAcreateserial -days 30 -extfile " + ext + " -out " + name +
        ".pem 2>/dev/null; openssl ocsp -issuer " + pki("intermediate.pem") + " -cert " +
        pki("good.pem") + " -no_nonce -reqout " + name + ".req; openssl ocsp -index " +
        pki("ocsp-index.txt") + " -CA " + pki("intermediate.pem") + " -rsigner " + name +
        ".pem -rkey " + name + ".key -reqin " + name + ".req -respout " + name +
        ".der -ndays 7 >/dev/null 2>&1");
    REQUIRE(made.exit_code == 0);
    return vec_of(read_file(d + "/" + name + ".der"));
  };
  struct Case {
    const char* name;
    const char* ca;
    const char* eku;
    const char* reason;  // "" = the staple is good
  };
  const Case cases[] = {
      {"delegated", "intermediate", "OCSPSigning", ""},
      {"no-eku", "intermediate", "", "not authorised for OCSP signing"},
      {"server-eku", "intermediate", "serverAuth", "not authorised for OCSP signing"},
      // The root may not answer for the intermediate's certificates.
      {"from-root", "root", "OCSPSigning", "which the certificate's issuer did not issue"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto o = verify_trusting_test_root();
    o.ocsp_staple = responder(c.name, c.ca, c.eku);
    const auto v = verify(load(pki("good-chain.pem")), o);
    INFO(describe(v));
    REQUIRE(v.revocation.size() == 1);
    if (std::string(c.reason).empty()) {
      CHECK(v.revocation[0].status == getcert::RevocationStatus::good);
      CHECK(v.ok);
    } else {
      CHECK(v.revocation[0].status == getcert::RevocationStatus::error);
      CHECK_THAT(v.revocation[0].detail, Contains(c.reason));
      CHECK_FALSE(v.ok);
    }
  }
}
