// Offline verify_chain over the generated PKI, trusting ca-bundle.pem (what --ca-file does):
// every verdict a user can get, with the plain-language reason they will read.

#include <catch2/catch.hpp>

#include <ctime>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "support/files.hpp"

using Catch::Matchers::Contains;
using getcert::Certificate;
using getcert::Errc;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::test::pki;
using getcert::test::read_file;

namespace {

std::vector<Certificate> load_chain(const std::vector<std::string>& files) {
  std::vector<Certificate> out;
  for (const auto& f : files) {
    auto certs = getcert::parse_certificates_pem(read_file(pki(f)));
    if (!certs) FAIL(f << ": " << certs.error().message);
    out.insert(out.end(), certs->begin(), certs->end());
  }
  return out;
}

VerifyOptions trusting_test_root(const std::string& name) {
  VerifyOptions o;
  o.trust.ca_file = pki("ca-bundle.pem");
  o.name = name;
  return o;
}

Verification verify(const std::vector<std::string>& files, const VerifyOptions& options) {
  auto v = getcert::verify_chain(load_chain(files), options);
  if (!v) FAIL("verify_chain failed: " << v.error().message);
  return *v;
}

bool has_code(const Verification& v, const std::string& code) {
  for (const auto& e : v.errors) {
    if (e.code == code) return true;
  }
  return false;
}

std::string codes(const Verification& v) {
  std::string out;
  for (const auto& e : v.errors)
    out += "[" + std::to_string(e.depth) + "] " + e.code + ": " + e.reason + "\n";
  return out;
}

}  // namespace

TEST_CASE("a good chain verifies and the verified chain runs leaf, intermediate, root",
          "[verify]") {
  for (const char* leaf : {"rsa", "ecdsa", "ed25519"}) {
    INFO("leaf: " << leaf);
    const auto v = verify({std::string(leaf) + "-chain.pem"}, trusting_test_root("localhost"));
    INFO(codes(v));
    CHECK(v.ok);
    CHECK(v.trusted);
    CHECK(v.hostname_ok);
    CHECK(v.errors.empty());
    CHECK(v.trust_store == "file:" + pki("ca-bundle.pem"));
    REQUIRE(v.verified_chain.size() == 3);
    CHECK(v.verified_chain[0].subject_cn == std::string(leaf) + ".test");
    CHECK(v.verified_chain[1].subject == "CN=getcert Test Intermediate CA,O=getcert tests");
    CHECK(v.verified_chain[2].subject == "CN=getcert Test Root CA,O=getcert tests");
    CHECK(v.verified_chain[2].pem() == read_file(pki("root.pem")));
  }
}

TEST_CASE("helpers after the leaf may come in any order", "[verify]") {
  const auto v = verify({"ecdsa.pem", "untrusted-root.pem", "intermediate.pem"},
                        trusting_test_root("ecdsa.test"));
  INFO(codes(v));
  CHECK(v.ok);
}

TEST_CASE("expired leaf: reason says how long ago", "[verify]") {
  const auto chain = load_chain({"expired-chain.pem"});
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t days_ago = (now - chain.front().not_after) / 86400;
  REQUIRE(days_ago >= 12);  // generated as now-12d; more if the build tree is older

  auto v = getcert::verify_chain(chain, trusting_test_root("expired.test"));
  REQUIRE(v);
  INFO(codes(*v));
  CHECK_FALSE(v->ok);
  CHECK_FALSE(v->trusted);
  CHECK(v->hostname_ok);
  CHECK(v->verified_chain.empty());
  REQUIRE(v->errors.size() == 1);
  CHECK(v->errors[0].code == "expired");
  CHECK(v->errors[0].depth == 0);
  CHECK_THAT(
      v->errors[0].reason,
      Contains("'expired.test'") && Contains("expired " + std::to_string(days_ago) + " days ago"));

  SECTION("as of the day the PKI was made it is exactly 12 days") {
    auto at = trusting_test_root("expired.test");
    at.at_time = chain.front().not_after + 12 * 86400 + 600;
    auto fixed = getcert::verify_chain(chain, at);
    REQUIRE(fixed);
    REQUIRE_FALSE(fixed->errors.empty());
    CHECK_THAT(fixed->errors[0].reason,
               Contains("expired 12 days ago (not after " +
                        getcert::format_utc(chain.front().not_after) + ")"));
  }
}

TEST_CASE("not-yet-valid leaf", "[verify]") {
  const auto v = verify({"notyet-chain.pem"}, trusting_test_root("notyet.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0].code == "not_yet_valid");
  CHECK_THAT(v.errors[0].reason, Contains("'notyet.test' is not valid until"));
}

TEST_CASE("verifying as of a far-future time: a good chain is expired", "[verify]") {
  auto o = trusting_test_root("ecdsa.test");
  o.at_time = static_cast<std::int64_t>(std::time(nullptr)) + 20LL * 365 * 86400;
  const auto v = verify({"ecdsa-chain.pem"}, o);
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "expired"));
}

TEST_CASE("wrong host: name mismatch names what the certificate is for", "[verify]") {
  const auto v = verify({"wronghost-chain.pem"}, trusting_test_root("localhost"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(v.trusted);  // the chain itself is fine
  CHECK_FALSE(v.hostname_ok);
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == "hostname_mismatch");
  CHECK_THAT(v.errors[0].reason,
             Contains("name mismatch: certificate is for other.example, not localhost"));
  CHECK(v.verified_chain.size() == 3);
}

TEST_CASE("wildcard matches exactly one label", "[verify]") {
  CHECK(verify({"wildcard-chain.pem"}, trusting_test_root("x.wild.test")).ok);
  CHECK(verify({"wildcard-chain.pem"}, trusting_test_root("X.Wild.Test")).ok);
  for (const char* name : {"wild.test", "a.b.wild.test", "xwild.test"}) {
    INFO("name: " << name);
    const auto v = verify({"wildcard-chain.pem"}, trusting_test_root(name));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.hostname_ok);
    CHECK(has_code(v, "hostname_mismatch"));
  }
}

TEST_CASE("a trailing dot on the name is ignored", "[verify]") {
  CHECK(verify({"ecdsa-chain.pem"}, trusting_test_root("ecdsa.test.")).ok);
}

TEST_CASE("IP targets match only IP SANs", "[verify]") {
  CHECK(verify({"ipsan-chain.pem"}, trusting_test_root("127.0.0.1")).ok);
  CHECK(verify({"ipsan-chain.pem"}, trusting_test_root("::1")).ok);
  CHECK(verify({"rsa-chain.pem"}, trusting_test_root("127.0.0.1")).ok);
  CHECK(verify({"rsa-chain.pem"}, trusting_test_root("::1")).ok);

  SECTION("an address not in the IP SANs") {
    const auto v = verify({"ipsan-chain.pem"}, trusting_test_root("127.0.0.2"));
    CHECK_FALSE(v.hostname_ok);
    CHECK(has_code(v, "ip_mismatch"));
  }
  SECTION("a DNS-only certificate never matches an IP") {
    const auto v = verify({"wildcard-chain.pem"}, trusting_test_root("127.0.0.1"));
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.hostname_ok);
    REQUIRE_FALSE(v.errors.empty());
    CHECK(v.errors[0].code == "ip_mismatch");
    CHECK_THAT(v.errors[0].reason, Contains("no IP address SANs"));
  }
  SECTION("an IP written as the CN does not count (ipsan's CN is 127.0.0.1, SANs rule)") {
    const auto v = verify({"ipsan-chain.pem"}, trusting_test_root("localhost"));
    CHECK_FALSE(v.hostname_ok);
  }
  SECTION("wronghost has a DNS SAN only") {
    const auto v = verify({"wronghost-chain.pem"}, trusting_test_root("127.0.0.1"));
    CHECK_FALSE(v.hostname_ok);
    CHECK(has_code(v, "ip_mismatch"));
  }
}

TEST_CASE("an empty name skips the name check", "[verify]") {
  const auto v = verify({"wronghost-chain.pem"}, trusting_test_root(""));
  CHECK(v.ok);
  CHECK(v.hostname_ok);
}

TEST_CASE("self-signed leaf", "[verify]") {
  const auto v = verify({"selfsigned-chain.pem"}, trusting_test_root("selfsigned.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  CHECK(v.hostname_ok);
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == "self_signed");
  CHECK_THAT(v.errors[0].reason, Contains("self-signed") && Contains("'selfsigned.test'"));
}

TEST_CASE("chain to a root that is not trusted", "[verify]") {
  const auto v = verify({"untrusted-chain.pem"}, trusting_test_root("untrusted.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  CHECK(v.verified_chain.empty());
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == "untrusted_root");
  CHECK(v.errors[0].depth == 1);
  CHECK_THAT(v.errors[0].reason, Contains("'getcert Untrusted Root'"));
}

TEST_CASE("leaf without its intermediate: the reason names the missing intermediate", "[verify]") {
  const auto v = verify({"ecdsa.pem"}, trusting_test_root("ecdsa.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == "missing_intermediate");
  CHECK(v.errors[0].depth == 0);
  CHECK_THAT(v.errors[0].reason, Contains("'getcert Test Intermediate CA'"));
}

TEST_CASE("a leaf-only chain completed from the trust store still reports the gap", "[verify]") {
  getcert::test::TempDir dir;
  getcert::test::write_file(dir / "anchors.pem",
                            read_file(pki("root.pem")) + read_file(pki("intermediate.pem")));
  VerifyOptions o;
  o.trust.ca_file = dir / "anchors.pem";
  o.name = "ecdsa.test";
  const auto v = verify({"ecdsa.pem"}, o);
  INFO(codes(v));
  CHECK(v.hostname_ok);
  REQUIRE(v.verified_chain.size() == 3);
  CHECK(v.verified_chain[1].subject_cn == "getcert Test Intermediate CA");
  CHECK(has_code(v, "missing_intermediate"));
}

TEST_CASE("client certificate fails the server purpose", "[verify]") {
  const auto v = verify({"client-chain.pem"}, trusting_test_root(""));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "wrong_purpose"));

  auto as_client = trusting_test_root("");
  as_client.purpose = getcert::Purpose::client;
  CHECK(verify({"client-chain.pem"}, as_client).ok);
  as_client.purpose = getcert::Purpose::any;
  CHECK(verify({"client-chain.pem"}, as_client).ok);
  CHECK_FALSE(verify({"ecdsa-chain.pem"},
                     [] {
                       auto o = trusting_test_root("");
                       o.purpose = getcert::Purpose::client;
                       return o;
                     }())
                  .ok);
}

TEST_CASE("several problems are all reported, name mismatch first", "[verify]") {
  const auto v = verify({"expired-chain.pem"}, trusting_test_root("other.example"));
  INFO(codes(v));
  REQUIRE(v.errors.size() >= 2);
  CHECK(v.errors[0].code == "hostname_mismatch");
  CHECK(has_code(v, "expired"));
}

TEST_CASE("a hashed CA directory works as the trust store", "[verify]") {
  VerifyOptions o;
  o.trust.ca_dir = pki("ca-dir");
  o.name = "ecdsa.test";
  const auto v = verify({"ecdsa-chain.pem"}, o);
  INFO(codes(v));
  CHECK(v.ok);
  CHECK(v.trust_store == "dir:" + pki("ca-dir"));
  REQUIRE(v.verified_chain.size() == 3);
}

TEST_CASE("a trust store without our root trusts nothing of ours", "[verify]") {
  VerifyOptions o;
  o.trust.ca_file = pki("untrusted-root.pem");
  o.name = "ecdsa.test";
  const auto v = verify({"ecdsa-chain.pem"}, o);
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  CHECK(verify({"untrusted-chain.pem"},
               [&] {
                 auto u = o;
                 u.name = "untrusted.test";
                 return u;
               }())
            .ok);
}

TEST_CASE("trust store problems are errors, not verdicts", "[verify]") {
  const auto chain = load_chain({"ecdsa-chain.pem"});
  SECTION("missing CA file") {
    VerifyOptions o;
    o.trust.ca_file = "/nonexistent/getcert/ca.pem";
    auto v = getcert::verify_chain(chain, o);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::io_error);
    CHECK_THAT(v.error().message, Contains("/nonexistent/getcert/ca.pem"));
  }
  SECTION("CA file that is a directory") {
    VerifyOptions o;
    o.trust.ca_file = pki("ca-dir");
    auto v = getcert::verify_chain(chain, o);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::io_error);
  }
  SECTION("missing CA directory") {
    VerifyOptions o;
    o.trust.ca_dir = "/nonexistent/getcert/dir";
    auto v = getcert::verify_chain(chain, o);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::io_error);
  }
  SECTION("CA file without certificates") {
    VerifyOptions o;
    o.trust.ca_file = pki("ecdsa.key");
    auto v = getcert::verify_chain(chain, o);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::malformed_input);
  }
  SECTION("nothing to verify") {
    auto v = getcert::verify_chain({}, trusting_test_root("x"));
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::invalid_argument);
  }
}
