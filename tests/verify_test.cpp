// Offline verify_chain over the generated PKI, trusting ca-bundle.pem (what --ca-file does):
// every verdict a user can get, with the plain-language reason they will read.

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/issued_leaf.hpp"
#include "support/skip.hpp"
#include "support/test_pki.hpp"
#include "support/verdicts.hpp"

using Catch::Matchers::Contains;
using getcert::Certificate;
using getcert::Errc;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::test::codes;
using getcert::test::has_warning;
using getcert::test::pki;
using getcert::test::read_file;
using getcert::test::verify_trusting_test_root;

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

Verification verify(const std::vector<std::string>& files, const VerifyOptions& options) {
  auto v = getcert::verify_chain(load_chain(files), options);
  if (!v) FAIL("verify_chain failed: " << v.error().message);
  return *v;
}

bool has_code(const Verification& v, const std::string& code) {
  return std::any_of(v.errors.begin(), v.errors.end(), [&](const getcert::VerifyProblem& e) {
    return getcert::to_string(e.code) == code;
  });
}

}  // namespace

TEST_CASE("a good chain verifies and the verified chain runs leaf, intermediate, root",
          "[verify]") {
  for (const char* leaf : {"rsa", "ecdsa", "ed25519"}) {
    INFO("leaf: " << leaf);
    const auto v =
        verify({std::string(leaf) + "-chain.pem"}, verify_trusting_test_root("localhost"));
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
                        verify_trusting_test_root("ecdsa.test"));
  INFO(codes(v));
  CHECK(v.ok);
}

TEST_CASE("expired leaf: reason says how long ago", "[verify]") {
  const auto chain = load_chain({"expired-chain.pem"});
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t days_ago = (now - chain.front().not_after) / 86400;
  REQUIRE(days_ago >= 12);  // generated as now-12d; more if the build tree is older

  auto v = getcert::verify_chain(chain, verify_trusting_test_root("expired.test"));
  REQUIRE(v);
  INFO(codes(*v));
  CHECK_FALSE(v->ok);
  CHECK_FALSE(v->trusted);
  CHECK(v->hostname_ok);
  CHECK(v->verified_chain.empty());
  REQUIRE(v->errors.size() == 1);
  CHECK(v->errors[0].code == getcert::ProblemCode::expired);
  CHECK(v->errors[0].depth == 0);
  CHECK_THAT(
      v->errors[0].reason,
      Contains("'expired.test'") && Contains("expired " + std::to_string(days_ago) + " days ago"));

  SECTION("as of the day the PKI was made it is exactly 12 days") {
    auto at = verify_trusting_test_root("expired.test");
    at.at_time = chain.front().not_after + 12LL * 86400 + 600;
    auto fixed = getcert::verify_chain(chain, at);
    REQUIRE(fixed);
    REQUIRE_FALSE(fixed->errors.empty());
    CHECK_THAT(fixed->errors[0].reason,
               Contains("expired 12 days ago (not after " +
                        getcert::format_utc(chain.front().not_after) + ")"));
  }
}

TEST_CASE("not-yet-valid leaf", "[verify]") {
  const auto v = verify({"notyet-chain.pem"}, verify_trusting_test_root("notyet.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  REQUIRE(v.errors.size() == 1);
  CHECK(v.errors[0].code == getcert::ProblemCode::not_yet_valid);
  CHECK_THAT(v.errors[0].reason, Contains("'notyet.test' is not valid until"));
}

TEST_CASE("verifying as of a far-future time: a good chain is expired", "[verify]") {
  auto o = verify_trusting_test_root("ecdsa.test");
  o.at_time = static_cast<std::int64_t>(std::time(nullptr)) + 20LL * 365 * 86400;
  const auto v = verify({"ecdsa-chain.pem"}, o);
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "expired"));
}

TEST_CASE("wrong host: name mismatch names what the certificate is for", "[verify]") {
  const auto v = verify({"wronghost-chain.pem"}, verify_trusting_test_root("localhost"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(v.trusted);  // the chain itself is fine
  CHECK_FALSE(v.hostname_ok);
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == getcert::ProblemCode::hostname_mismatch);
  CHECK_THAT(v.errors[0].reason,
             Contains("name mismatch: certificate is for other.example, not localhost"));
  CHECK(v.verified_chain.size() == 3);
}

TEST_CASE("wildcard matches exactly one label", "[verify]") {
  CHECK(verify({"wildcard-chain.pem"}, verify_trusting_test_root("x.wild.test")).ok);
  CHECK(verify({"wildcard-chain.pem"}, verify_trusting_test_root("X.Wild.Test")).ok);
  for (const char* name : {"wild.test", "a.b.wild.test", "xwild.test"}) {
    INFO("name: " << name);
    const auto v = verify({"wildcard-chain.pem"}, verify_trusting_test_root(name));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.hostname_ok);
    CHECK(has_code(v, "hostname_mismatch"));
  }
}

TEST_CASE("a trailing dot on the name is ignored", "[verify]") {
  CHECK(verify({"ecdsa-chain.pem"}, verify_trusting_test_root("ecdsa.test.")).ok);
}

TEST_CASE("IP targets match only IP SANs", "[verify]") {
  CHECK(verify({"ipsan-chain.pem"}, verify_trusting_test_root("127.0.0.1")).ok);
  CHECK(verify({"ipsan-chain.pem"}, verify_trusting_test_root("::1")).ok);
  CHECK(verify({"rsa-chain.pem"}, verify_trusting_test_root("127.0.0.1")).ok);
  CHECK(verify({"rsa-chain.pem"}, verify_trusting_test_root("::1")).ok);

  SECTION("an address not in the IP SANs") {
    const auto v = verify({"ipsan-chain.pem"}, verify_trusting_test_root("127.0.0.2"));
    CHECK_FALSE(v.hostname_ok);
    CHECK(has_code(v, "ip_mismatch"));
  }
  SECTION("a DNS-only certificate never matches an IP") {
    const auto v = verify({"wildcard-chain.pem"}, verify_trusting_test_root("127.0.0.1"));
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.hostname_ok);
    REQUIRE_FALSE(v.errors.empty());
    CHECK(v.errors[0].code == getcert::ProblemCode::ip_mismatch);
    CHECK_THAT(v.errors[0].reason, Contains("no IP address SANs"));
  }
  SECTION("an IP written as the CN does not count (ipsan's CN is 127.0.0.1, SANs rule)") {
    const auto v = verify({"ipsan-chain.pem"}, verify_trusting_test_root("localhost"));
    CHECK_FALSE(v.hostname_ok);
  }
  SECTION("wronghost has a DNS SAN only") {
    const auto v = verify({"wronghost-chain.pem"}, verify_trusting_test_root("127.0.0.1"));
    CHECK_FALSE(v.hostname_ok);
    CHECK(has_code(v, "ip_mismatch"));
  }
}

TEST_CASE("an empty name skips the name check", "[verify]") {
  const auto v = verify({"wronghost-chain.pem"}, verify_trusting_test_root(""));
  CHECK(v.ok);
  CHECK(v.hostname_ok);
}

TEST_CASE("self-signed leaf", "[verify]") {
  const auto v = verify({"selfsigned-chain.pem"}, verify_trusting_test_root("selfsigned.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  CHECK(v.hostname_ok);
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == getcert::ProblemCode::self_signed);
  CHECK_THAT(v.errors[0].reason, Contains("self-signed") && Contains("'selfsigned.test'"));
}

TEST_CASE("chain to a root that is not trusted", "[verify]") {
  const auto v = verify({"untrusted-chain.pem"}, verify_trusting_test_root("untrusted.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  CHECK(v.verified_chain.empty());
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == getcert::ProblemCode::untrusted_root);
  CHECK(v.errors[0].depth == 1);
  CHECK_THAT(v.errors[0].reason, Contains("'getcert Untrusted Root'"));
}

TEST_CASE("leaf without its intermediate: the reason names the missing intermediate", "[verify]") {
  const auto v = verify({"ecdsa.pem"}, verify_trusting_test_root("ecdsa.test"));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK_FALSE(v.trusted);
  REQUIRE_FALSE(v.errors.empty());
  CHECK(v.errors[0].code == getcert::ProblemCode::missing_intermediate);
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
  const auto v = verify({"client-chain.pem"}, verify_trusting_test_root(""));
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "wrong_purpose"));

  auto as_client = verify_trusting_test_root("");
  as_client.purpose = getcert::Purpose::client;
  CHECK(verify({"client-chain.pem"}, as_client).ok);
  as_client.purpose = getcert::Purpose::any;
  CHECK(verify({"client-chain.pem"}, as_client).ok);
  CHECK_FALSE(verify({"ecdsa-chain.pem"},
                     [] {
                       auto o = verify_trusting_test_root("");
                       o.purpose = getcert::Purpose::client;
                       return o;
                     }())
                  .ok);
}

TEST_CASE("several problems are all reported, name mismatch first", "[verify]") {
  const auto v = verify({"expired-chain.pem"}, verify_trusting_test_root("other.example"));
  INFO(codes(v));
  REQUIRE(v.errors.size() >= 2);
  CHECK(v.errors[0].code == getcert::ProblemCode::hostname_mismatch);
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

TEST_CASE("a CA directory whose certificate is edited in place is read again", "[verify]") {
  // The folder's own timestamp does not change when a file in it is rewritten (or when the
  // file behind one of c_rehash's links is): each entry is judged.
  getcert::test::TempDir tmp;
  std::filesystem::create_directory(tmp / "dir");
  getcert::test::write_file(tmp / "dir/root.pem", read_file(pki("root.pem")));
  getcert::test::openssl({"rehash", tmp / "dir"});
  struct stat before {};
  REQUIRE(::stat((tmp / "dir").c_str(), &before) == 0);
  VerifyOptions o;
  o.trust.ca_dir = tmp / "dir";
  o.name = "ecdsa.test";
  CHECK(verify({"ecdsa-chain.pem"}, o).ok);
  // Another CA in the same file, written in place through the existing descriptor's path.
  {
    std::ofstream out(tmp / "dir/root.pem", std::ios::trunc);
    out << read_file(pki("untrusted-root.pem"));
  }
  struct stat after {};
  REQUIRE(::stat((tmp / "dir").c_str(), &after) == 0);
  CHECK(after.st_mtim.tv_sec == before.st_mtim.tv_sec);
  CHECK(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  CHECK_FALSE(verify({"ecdsa-chain.pem"}, o).ok);
  {
    std::ofstream out(tmp / "dir/root.pem", std::ios::trunc);
    out << read_file(pki("root.pem"));
  }
  CHECK(verify({"ecdsa-chain.pem"}, o).ok);
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
  // verify_chain() of the chain with only `trust` set: an error with `code`, not a verdict.
  auto trust_error = [&chain](const getcert::TrustOptions& trust, Errc code) {
    VerifyOptions o;
    o.trust = trust;
    auto v = getcert::verify_chain(chain, o);
    REQUIRE_FALSE(v);
    CHECK(v.error().code == code);
    return v.error();
  };
  SECTION("missing CA file") {
    getcert::TrustOptions trust;
    trust.ca_file = "/nonexistent/getcert/ca.pem";
    CHECK_THAT(trust_error(trust, Errc::io_error).message, Contains("/nonexistent/getcert/ca.pem"));
  }
  SECTION("CA file that is a directory") {
    getcert::TrustOptions trust;
    trust.ca_file = pki("ca-dir");
    trust_error(trust, Errc::io_error);
  }
  SECTION("missing CA directory") {
    getcert::TrustOptions trust;
    trust.ca_dir = "/nonexistent/getcert/dir";
    trust_error(trust, Errc::io_error);
  }
  SECTION("CA file without certificates") {
    getcert::TrustOptions trust;
    trust.ca_file = pki("ecdsa.key");
    trust_error(trust, Errc::malformed_input);
  }
  SECTION("nothing to verify") {
    auto v = getcert::verify_chain({}, verify_trusting_test_root("x"));
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::invalid_argument);
  }
}

// ---- policy: what the strictest common clients (Go, OpenSSL at SECLEVEL 2, gRPC) accept ------

namespace {

using getcert::ProblemCode;
using getcert::test::issue_leaf;
using getcert::test::LeafSpec;
using getcert::test::TempDir;

std::vector<Certificate> load_files(const std::string& chain_file) {
  auto certs = getcert::parse_certificates_pem(read_file(chain_file));
  if (!certs) FAIL(chain_file << ": " << certs.error().message);
  return *certs;
}

Verification verify_certs(const std::vector<Certificate>& chain, const VerifyOptions& options) {
  auto v = getcert::verify_chain(chain, options);
  if (!v) FAIL("verify_chain failed: " << v.error().message);
  return *v;
}

LeafSpec spec(const std::string& cn, const std::string& san) {
  LeafSpec s;
  s.cn = cn;
  s.san = san;
  return s;
}

}  // namespace

TEST_CASE("a leaf with SANs is never matched on its CN, whatever kind its SANs are", "[verify]") {
  TempDir tmp;
  SECTION("only an IP SAN") {
    const auto chain =
        load_files(issue_leaf(tmp, "ipcn", "good.test", "IP:127.0.0.1").chain_pem_file);
    const auto v = verify_certs(chain, verify_trusting_test_root("good.test"));
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.hostname_ok);
    CHECK(v.trusted);
    REQUIRE_FALSE(v.errors.empty());
    CHECK(v.errors[0].code == ProblemCode::hostname_mismatch);
    CHECK_THAT(v.errors[0].reason, Contains("no DNS names") && Contains("127.0.0.1") &&
                                       Contains("its CN does not count"));
    CHECK(verify_certs(chain, verify_trusting_test_root("127.0.0.1")).ok);
  }
  SECTION("only a URI and an email SAN") {
    const auto chain = load_files(
        issue_leaf(tmp, "uricn", "good.test", "URI:https://good.test/, email:a@good.test")
            .chain_pem_file);
    const auto v = verify_certs(chain, verify_trusting_test_root("good.test"));
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.hostname_ok);
  }
}

TEST_CASE("a leaf without any SAN extension falls back to its CN, with a cn_fallback warning",
          "[verify]") {
  TempDir tmp;
  const auto chain = load_files(issue_leaf(tmp, "nosan", "nosan.test", "").chain_pem_file);
  REQUIRE(chain.front().sans.dns.empty());
  auto openssl = verify_trusting_test_root("nosan.test");
  openssl.profile = getcert::Profile::openssl;
  const auto v = verify_certs(chain, openssl);
  INFO(codes(v));
  CHECK(v.ok);
  CHECK(v.verdict == getcert::Verdict::valid);
  REQUIRE(has_warning(v, ProblemCode::cn_fallback));
  CHECK_THAT(v.warnings[0].message, Contains("nosan.test") && Contains("subjectAltName"));

  CHECK(v.profile == getcert::Profile::openssl);
  CHECK(v.accepted_by.empty());

  auto other_name = verify_trusting_test_root("other.test");
  other_name.profile = getcert::Profile::openssl;
  const auto other = verify_certs(chain, other_name);
  CHECK_FALSE(other.hostname_ok);
  CHECK_FALSE(has_warning(other, ProblemCode::cn_fallback));
  // A leaf with a DNS SAN that matches never warns.
  CHECK(verify({"ecdsa-chain.pem"}, verify_trusting_test_root("ecdsa.test")).warnings.empty());
}

TEST_CASE("the webpki profile (the default) has no CN fallback, and says who accepts the chain",
          "[verify]") {
  TempDir tmp;
  const auto chain = load_files(issue_leaf(tmp, "nosan", "nosan.test", "").chain_pem_file);
  for (const auto profile : {getcert::Profile::webpki, getcert::Profile::rfc5280}) {
    auto o = verify_trusting_test_root("nosan.test");
    o.profile = profile;
    const auto v = verify_certs(chain, o);
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK(v.verdict == getcert::Verdict::invalid);
    CHECK(v.trusted);
    CHECK_FALSE(v.hostname_ok);
    CHECK_FALSE(v.profile_ok);
    CHECK(v.profile == profile);
    CHECK(has_code(v, "no_subject_alt_name"));
    CHECK_FALSE(has_warning(v, ProblemCode::cn_fallback));
    REQUIRE(v.accepted_by.size() == 1);
    CHECK(v.accepted_by[0].profile == getcert::Profile::openssl);
    CHECK_THAT(v.accepted_by[0].reason,
               Contains("rejected under " + std::string(getcert::to_string(profile))) &&
                   Contains("no subjectAltName") && Contains("through the CN") &&
                   Contains("--profile openssl"));
  }
  // The default is webpki.
  CHECK(VerifyOptions{}.profile == getcert::Profile::webpki);
}

TEST_CASE("a Baseline Requirements rule is a warning under webpki and rfc5280, cabf rejects",
          "[verify]") {
  TempDir tmp;
  // The CN names a host the SANs do not hold (BR 7.1.4.3; RFC 5280 has no such rule).
  const auto chain = load_files(issue_leaf(tmp, "cnout", "b.test", "DNS:a.test").chain_pem_file);
  auto o = verify_trusting_test_root("a.test");
  for (const auto profile : {getcert::Profile::webpki, getcert::Profile::rfc5280}) {
    o.profile = profile;
    const auto v = verify_certs(chain, o);
    INFO(getcert::to_string(profile) << ": " << codes(v));
    CHECK(v.ok);
    CHECK(has_warning(v, ProblemCode::cn_not_in_sans));
  }
  o.profile = getcert::Profile::cabf;
  const auto strict = verify_certs(chain, o);
  CHECK_FALSE(strict.ok);
  CHECK(has_code(strict, "cn_not_in_sans"));
  const auto e = std::find_if(strict.errors.begin(), strict.errors.end(),
                              [](const auto& p) { return p.code == ProblemCode::cn_not_in_sans; });
  CHECK(e->depth == 0);
  CHECK_THAT(e->reason, Contains("the leaf (depth 0, 'b.test')") && Contains("BR 7.1.4.3"));
  // Computed by evaluating each profile: all three others accept it, webpki first.
  REQUIRE(strict.accepted_by.size() == 3);
  CHECK(strict.accepted_by[0].profile == getcert::Profile::webpki);
  CHECK_THAT(strict.accepted_by[0].reason,
             Contains("rejected under cabf") && Contains("--profile webpki"));
}

TEST_CASE("the false alarms modern clients never raise pass the default profile", "[verify]") {
  TempDir tmp;
  SECTION("a wildcard under a private public suffix (GitHub Pages, App Engine, S3)") {
    for (const std::string suffix : {"github.io", "appspot.com", "s3.amazonaws.com"}) {
      INFO(suffix);
      const auto chain =
          load_files(issue_leaf(tmp, "priv", "x." + suffix, "DNS:*." + suffix + ", DNS:x." + suffix)
                         .chain_pem_file);
      const auto v = verify_certs(chain, verify_trusting_test_root("x." + suffix));
      INFO(codes(v));
      CHECK(v.ok);
      CHECK_FALSE(has_warning(v, ProblemCode::wildcard_public_suffix));
    }
    // An ICANN suffix is still refused, as Chromium refuses it.
    const auto icann =
        load_files(issue_leaf(tmp, "icann", "x.co.uk", "DNS:*.co.uk, DNS:x.co.uk").chain_pem_file);
    const auto v = verify_certs(icann, verify_trusting_test_root("x.co.uk"));
    CHECK_FALSE(v.ok);
    CHECK(has_code(v, "wildcard_public_suffix"));
  }
  SECTION("a leaf without authorityKeyIdentifier: a warning, an error where RFC 5280 rules") {
    auto spec = getcert::test::LeafSpec{};
    spec.cn = "noaki.test";
    spec.san = "DNS:noaki.test";
    spec.extra_extensions = "authorityKeyIdentifier = none\n";
    const auto chain = load_files(issue_leaf(tmp, "noaki", spec).chain_pem_file);
    auto o = verify_trusting_test_root("noaki.test");
    const auto v = verify_certs(chain, o);
    INFO(codes(v));
    CHECK(v.ok);
    CHECK(has_warning(v, ProblemCode::missing_authority_key_id));
    for (const auto profile : {getcert::Profile::rfc5280, getcert::Profile::cabf}) {
      o.profile = profile;
      CHECK(has_code(verify_certs(chain, o), "missing_authority_key_id"));
    }
  }
}

namespace {

// A leaf for `name` (its CN and only SAN) with a key made by `openssl genpkey KEY_ARGS`, signed
// with `digest`: the leaf and the intermediate.
std::vector<Certificate> keyed_leaf(const TempDir& tmp, const std::string& stem,
                                    const std::string& name,
                                    const std::vector<std::string>& key_args,
                                    const std::string& digest = "sha256") {
  getcert::test::LeafSpec s;
  s.cn = name;
  s.san = "DNS:" + name;
  s.key_args = key_args;
  s.digest = digest;
  return load_files(issue_leaf(tmp, stem, s).chain_pem_file);
}

}  // namespace

TEST_CASE("key shapes modern clients refuse: curves, explicit parameters, RSA exponents",
          "[verify]") {
  TempDir tmp;
  struct Case {
    std::string what;
    std::vector<std::string> key_args;
    std::string code;  // empty: accepted by every profile
  };
  const std::vector<Case> cases{
      {"secp256k1",
       {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"},
       "ec_curve_not_allowed"},
      {"brainpoolP256r1",
       {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:brainpoolP256r1"},
       "ec_curve_not_allowed"},
      {"P-224",
       {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-224"},
       "ec_curve_not_allowed"},
      {"explicit P-256",
       {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-pkeyopt",
        "ec_param_enc:explicit"},
       "ec_explicit_parameters"},
      {"P-384", {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"}, ""},
      {"P-521", {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"}, ""},
      {"RSA e=3",
       {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt", "rsa_keygen_pubexp:3"},
       ""},
  };
  int n = 0;
  for (const auto& c : cases) {
    INFO(c.what);
    const auto chain = keyed_leaf(tmp, "key" + std::to_string(++n), "key.test", c.key_args);
    auto o = verify_trusting_test_root("key.test");
    const auto v = verify_certs(chain, o);
    INFO(codes(v));
    if (c.code.empty()) {
      CHECK(v.ok);
      continue;
    }
    CHECK_FALSE(v.ok);
    REQUIRE(has_code(v, c.code));
    CHECK(v.errors.front().depth == 0);
    // OpenSSL 3 accepts the curves, and refuses explicit parameters itself.
    o.profile = getcert::Profile::openssl;
    const auto openssl = verify_certs(chain, o);
    INFO(codes(openssl));
    CHECK(openssl.ok == (c.code != "ec_explicit_parameters"));
  }
}

TEST_CASE("rfc5280 has its own key floor: SHA-1 and RSA-1024 pass, RSA-768 and RSA-512 do not",
          "[verify]") {
  TempDir tmp;
  struct Case {
    std::string what;
    std::vector<std::string> key_args;
    std::string digest;
    bool rfc5280_ok;
  };
  const std::vector<Case> cases{
      {"SHA-1", {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"}, "sha1", true},
      {"RSA 1024", {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"}, "sha256", true},
      // An MD5 signature needs an RSA issuer: tests/differential's md5-leaf-signature has one.
      {"RSA 768", {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:768"}, "sha256", false},
      {"RSA 512", {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:512"}, "sha256", false},
  };
  int n = 0;
  for (const auto& c : cases) {
    INFO(c.what);
    const auto chain =
        keyed_leaf(tmp, "floor" + std::to_string(++n), "floor.test", c.key_args, c.digest);
    auto o = verify_trusting_test_root("floor.test");
    for (const auto profile :
         {getcert::Profile::webpki, getcert::Profile::openssl, getcert::Profile::cabf}) {
      o.profile = profile;
      const auto v = verify_certs(chain, o);
      INFO(getcert::to_string(profile) << ": " << codes(v));
      CHECK_FALSE(v.ok);
      CHECK(has_code(v, "too_weak"));
    }
    o.profile = getcert::Profile::rfc5280;
    const auto v = verify_certs(chain, o);
    INFO(codes(v));
    CHECK(v.ok == c.rfc5280_ok);
    CHECK(has_code(v, "broken_algorithm") == !c.rfc5280_ok);
    if (c.rfc5280_ok) CHECK(has_warning(v, ProblemCode::too_weak));
  }
}

TEST_CASE("any one of several names may match, and an email must be in the leaf", "[verify]") {
  auto o = verify_trusting_test_root("nowhere.test");
  o.names = {"other.test", "ecdsa.test"};
  const auto v = verify({"ecdsa-chain.pem"}, o);
  INFO(codes(v));
  CHECK(v.ok);
  o.names = {"other.test"};
  const auto none = verify({"ecdsa-chain.pem"}, o);
  CHECK_FALSE(none.hostname_ok);
  REQUIRE_FALSE(none.errors.empty());
  CHECK_THAT(none.errors[0].reason, Contains("nowhere.test") && Contains("other.test"));

  TempDir tmp;
  const auto mail =
      load_files(issue_leaf(tmp, "mail", "a.test", "DNS:a.test, email:ops@a.test").chain_pem_file);
  auto m = verify_trusting_test_root("a.test");
  m.email = "ops@a.test";
  CHECK(verify_certs(mail, m).ok);
  m.email = "dev@a.test";
  const auto wrong = verify_certs(mail, m);
  CHECK_FALSE(wrong.ok);
  CHECK(has_code(wrong, "email_mismatch"));
}

TEST_CASE("max_depth bounds the intermediates, and crl_files check revocation offline",
          "[verify]") {
  auto o = verify_trusting_test_root("localhost");
  o.max_depth = 0;
  const auto deep = verify({"ecdsa-chain.pem"}, o);
  INFO(codes(deep));
  CHECK_FALSE(deep.ok);
  CHECK(has_code(deep, "chain_too_long"));
  o.max_depth = 1;
  CHECK(verify({"ecdsa-chain.pem"}, o).ok);

  auto crl = verify_trusting_test_root("localhost");
  crl.crl_files = {pki("intermediate-crl.pem")};
  const auto revoked = verify({"revoked-chain.pem"}, crl);
  INFO(codes(revoked));
  CHECK_FALSE(revoked.ok);
  CHECK(has_code(revoked, "revoked"));
  const auto good = verify({"good-chain.pem"}, crl);
  INFO(codes(good));
  CHECK(good.ok);
  // The root issued the intermediate, and no CRL of the root's was given: unchecked, said so.
  CHECK(has_warning(good, ProblemCode::revocation_unchecked));

  // The same CRL with one bit of its signature flipped: no evidence of anything. The chain
  // fails for the unusable CRL, and is not called revoked on its word.
  getcert::test::TempDir tmp;
  std::string tampered = read_file(pki("intermediate.crl"));
  tampered.back() = static_cast<char>(tampered.back() ^ 0x01);
  getcert::test::write_file(tmp / "tampered.crl", tampered);
  crl.crl_files = {tmp / "tampered.crl"};
  const auto forged = verify({"revoked-chain.pem"}, crl);
  INFO(codes(forged));
  CHECK_FALSE(forged.ok);
  CHECK(has_code(forged, "crl_problem"));
  CHECK_FALSE(has_code(forged, "revoked"));

  crl.crl_files = {pki("root.pem")};
  auto bad = getcert::verify_chain(load_chain({"good-chain.pem"}), crl);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::malformed_input);
}

TEST_CASE("weak certificates fail with too_weak, naming the certificate and the weakness",
          "[verify]") {
  TempDir tmp;
  struct Case {
    std::string what;
    std::vector<std::string> key_args;
    std::string digest;
    std::string reason;
  };
  const std::vector<Case> cases{
      {"SHA-1 signature",
       {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"},
       "sha1",
       "ecdsa-with-SHA1"},
      {"RSA 1024",
       {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"},
       "sha256",
       "RSA 1024 bits"},
      {"EC P-192",
       {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime192v1"},
       "sha256",
       "EC 192 bits"},
  };
  int n = 0;
  for (const auto& c : cases) {
    INFO(c.what);
    auto s = spec("weak.test", "DNS:weak.test");
    s.key_args = c.key_args;
    s.digest = c.digest;
    const std::string stem = "weak" + std::to_string(++n);
    std::vector<Certificate> chain;
    try {
      chain = load_files(issue_leaf(tmp, stem, s).chain_pem_file);
    } catch (const std::exception& e) {
      if (c.what == "EC P-192") GETCERT_SKIP("this openssl cannot make a P-192 key: " << e.what());
      throw;
    }
    const auto v = verify_certs(chain, verify_trusting_test_root("weak.test"));
    INFO(codes(v));
    CHECK_FALSE(v.ok);
    CHECK_FALSE(v.profile_ok);  // a path exists; the profile's key floor refuses it
    CHECK(v.verdict == getcert::Verdict::invalid);
    REQUIRE(has_code(v, "too_weak"));
    const auto weak = std::find_if(v.errors.begin(), v.errors.end(),
                                   [](const auto& e) { return e.code == ProblemCode::too_weak; });
    CHECK(weak->depth == 0);
    CHECK_THAT(weak->reason, Contains("'weak.test'") && Contains(c.reason));
  }
}

namespace {

// Verifies a fresh P-256 leaf for anchored.test (serial `serial`) that `root` (key `root_key`)
// signs with SHA-256, trusting only that root: how a root's own properties are judged.
Verification verify_leaf_under(const TempDir& tmp, const std::string& root,
                               const std::string& root_key, const std::string& serial) {
  const std::string leaf_key = tmp / "leaf.key";
  const std::string csr = tmp / "leaf.csr";
  const std::string leaf = tmp / "leaf.pem";
  getcert::test::write_file(tmp / "leaf.ext", "subjectAltName = DNS:anchored.test\n");
  getcert::test::openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                          "-nodes", "-keyout", leaf_key, "-subj", "/CN=anchored.test", "-out",
                          csr});
  getcert::test::openssl({"x509", "-req", "-in", csr, "-CA", root, "-CAkey", root_key,
                          "-set_serial", serial, "-days", "20", "-sha256", "-extfile",
                          tmp / "leaf.ext", "-out", leaf});
  VerifyOptions o;
  o.trust.ca_file = root;
  o.name = "anchored.test";
  o.fetch_missing = false;
  return verify_certs(load_files(leaf), o);
}

}  // namespace

TEST_CASE("the trust anchor's own SHA-1 self-signature does not matter, its key size does",
          "[verify]") {
  TempDir tmp;
  const std::string root_key = tmp / "sha1root.key";
  const std::string root = tmp / "sha1root.pem";
  getcert::test::openssl({"req",
                          "-x509",
                          "-newkey",
                          "ec",
                          "-pkeyopt",
                          "ec_paramgen_curve:P-256",
                          "-nodes",
                          "-keyout",
                          root_key,
                          "-subj",
                          "/CN=SHA-1 Root",
                          "-sha1",
                          "-days",
                          "30",
                          "-addext",
                          "basicConstraints=critical,CA:TRUE",
                          "-addext",
                          "keyUsage=critical,keyCertSign",
                          "-out",
                          root});
  const auto v = verify_leaf_under(tmp, root, root_key, "7");
  INFO(codes(v));
  CHECK(v.ok);
  REQUIRE(v.verified_chain.size() == 2);
  CHECK(v.verified_chain[1].signature_algorithm == "ecdsa-with-SHA1");
}

TEST_CASE("the trust anchor's own key must be strong enough too", "[verify]") {
  TempDir tmp;
  const std::string root_key = tmp / "weakroot.key";
  const std::string root = tmp / "weakroot.pem";
  getcert::test::openssl({"req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", root_key,
                          "-subj", "/CN=Weak Root", "-sha256", "-days", "30", "-out", root});
  const auto v = verify_leaf_under(tmp, root, root_key, "8");
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  REQUIRE(has_code(v, "too_weak"));
  const auto weak = std::find_if(v.errors.begin(), v.errors.end(),
                                 [](const auto& e) { return e.code == ProblemCode::too_weak; });
  CHECK(weak->depth == 1);
  CHECK_THAT(weak->reason, Contains("'Weak Root'") && Contains("RSA 1024 bits"));
}

TEST_CASE("validity is inclusive at both ends (RFC 5280), to the second", "[verify]") {
  const auto chain = load_chain({"ecdsa-chain.pem"});
  auto o = verify_trusting_test_root("ecdsa.test");
  const auto& leaf = chain.front();

  o.at_time = leaf.not_after;
  auto v = verify_certs(chain, o);
  INFO(codes(v));
  CHECK(v.ok);

  o.at_time = leaf.not_after + 1;
  v = verify_certs(chain, o);
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "expired"));

  o.at_time = leaf.not_before;
  CHECK(verify_certs(chain, o).ok);

  o.at_time = leaf.not_before - 1;
  v = verify_certs(chain, o);
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "not_yet_valid"));
}

TEST_CASE("an intermediate in the CA file is a trust anchor (partial chain), and says so",
          "[verify]") {
  VerifyOptions o;
  o.trust.ca_file = pki("intermediate.pem");
  o.name = "ecdsa.test";
  o.fetch_missing = false;
  for (const char* sent : {"ecdsa-chain.pem", "ecdsa.pem"}) {
    INFO("the server sends " << sent);
    const auto v = verify({sent}, o);
    INFO(codes(v));
    CHECK(v.ok);
    CHECK(v.verdict == getcert::Verdict::valid);
    REQUIRE(v.verified_chain.size() == 2);
    CHECK(v.verified_chain[1].subject_cn == "getcert Test Intermediate CA");
    REQUIRE(has_warning(v, ProblemCode::anchor_not_self_signed));
    CHECK(v.warnings[0].depth == 1);
    CHECK_THAT(v.warnings[0].message, Contains("'getcert Test Intermediate CA'"));
  }
  SECTION("a root in the same file still gives the full path to the root") {
    TempDir tmp;
    getcert::test::write_file(tmp / "both.pem",
                              read_file(pki("intermediate.pem")) + read_file(pki("root.pem")));
    o.trust.ca_file = tmp / "both.pem";
    const auto v = verify({"ecdsa-chain.pem"}, o);
    CHECK(v.ok);
    CHECK(v.verified_chain.size() == 3);
    CHECK(v.warnings.empty());
  }
  SECTION("a directory of anchors works the same way") {
    TempDir tmp;
    std::filesystem::create_directory(tmp / "dir");
    getcert::test::write_file(tmp / "dir/int.pem", read_file(pki("intermediate.pem")));
    getcert::test::openssl({"rehash", tmp / "dir"});
    VerifyOptions d = o;
    d.trust.ca_file.clear();
    d.trust.ca_dir = tmp / "dir";
    const auto v = verify({"ecdsa-chain.pem"}, d);
    INFO(codes(v));
    CHECK(v.ok);
    CHECK(v.verified_chain.size() == 2);
  }
}

TEST_CASE("chain issues: what the server sends, judged against the verified path", "[verify]") {
  struct Case {
    std::vector<std::string> sent;
    ProblemCode code;
    std::optional<int> depth;
    bool ok;
  };
  const std::vector<Case> cases{
      {{"ecdsa.pem", "intermediate.pem", "root.pem"}, ProblemCode::root_sent, 2, true},
      {{"ecdsa.pem", "root.pem", "intermediate.pem"}, ProblemCode::out_of_order, 1, true},
      {{"ecdsa.pem", "intermediate.pem", "intermediate.pem"}, ProblemCode::duplicate, 2, true},
      {{"ecdsa.pem", "intermediate.pem", "untrusted-root.pem"}, ProblemCode::unrelated, 2, true},
      {{"ecdsa.pem", "intermediate.pem", "expired.pem"}, ProblemCode::expired_unneeded, 2, true},
      {{"ecdsa.pem"}, ProblemCode::missing_intermediate, std::nullopt, false},
  };
  for (const auto& c : cases) {
    INFO("expect " << getcert::to_string(c.code));
    const auto v = verify(c.sent, verify_trusting_test_root("ecdsa.test"));
    INFO(codes(v));
    CHECK(v.ok == c.ok);
    const auto issue = std::find_if(v.chain_issues.begin(), v.chain_issues.end(),
                                    [&](const getcert::VerifyNote& n) { return n.code == c.code; });
    REQUIRE(issue != v.chain_issues.end());
    CHECK(issue->depth == c.depth);
    CHECK_FALSE(issue->message.empty());
  }
  CHECK(verify({"ecdsa-chain.pem"}, verify_trusting_test_root("ecdsa.test")).chain_issues.empty());
}

TEST_CASE("full_chain is the leaf and the intermediates of the verified path", "[verify]") {
  const auto v = verify({"ecdsa.pem", "root.pem", "intermediate.pem"},
                        verify_trusting_test_root("ecdsa.test"));
  const auto full = getcert::full_chain(v);
  REQUIRE(full.size() == 2);
  CHECK(full[0].subject_cn == "ecdsa.test");
  CHECK(full[1].subject_cn == "getcert Test Intermediate CA");
  CHECK(
      getcert::full_chain(verify({"ecdsa.pem"}, verify_trusting_test_root("ecdsa.test"))).empty());
}

TEST_CASE("must-staple is only judged for a chain from a handshake", "[verify]") {
  TempDir tmp;
  auto s = spec("staple.test", "DNS:staple.test");
  s.extra_extensions = "tlsfeature = status_request\n";
  const auto chain = load_files(issue_leaf(tmp, "staple", s).chain_pem_file);
  REQUIRE(chain.front().must_staple);
  auto o = verify_trusting_test_root("staple.test");
  CHECK(verify_certs(chain, o).ok);  // from a file: no handshake to judge
  o.from_handshake = true;
  const auto v = verify_certs(chain, o);
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, "must_staple_missing"));
}
