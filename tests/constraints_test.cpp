// Name constraints (RFC 5280 4.2.1.10): rfc822Name constraints in their three forms (a whole
// mailbox, a host, a .domain) over the email SANs and the subject's emailAddress of client
// certificates, with VerifyOptions::email; and the rules of verify/constraints.cpp over server
// chains (where the extension may be, how it is marked, dNSName syntax, wildcards reaching an
// excluded subtree), under each profile. Every certificate is made at test time
// (support/cert_builder.hpp).

#include <catch2/catch.hpp>

#include <string>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "internal/owners.hpp"
#include "support/cert_builder.hpp"
#include "support/files.hpp"
#include "support/verdicts.hpp"

using getcert::Certificate;
using getcert::ProblemCode;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::internal::EvpPkeyPtr;
using getcert::internal::X509Ptr;
using getcert::test::cert_spec;
using getcert::test::CertSpec;
using getcert::test::codes;
using getcert::test::has_code;
using getcert::test::has_warning;
using getcert::test::make_cert;
using getcert::test::model;
using getcert::test::new_key;
using getcert::test::TempDir;

namespace {

// A root, and under it a CA with the given rfc822Name constraints that issues client leaves.
struct EmailPki {
  explicit EmailPki(const std::string& constraints) {
    CertSpec s = cert_spec("Email CA", "Email Root", ca_key.get(), root_key.get());
    s.name_constraints = constraints;
    ca = make_cert(s);
    getcert::test::write_file(dir / "root.pem", getcert::to_pem({model(root)}));
  }

  // Verifies a client leaf with these SANs and subject emailAddress, asking for `email`.
  Verification judge(const std::string& san, const std::string& subject_email = "",
                     const std::string& email = "",
                     getcert::Profile profile = getcert::Profile::webpki) const {
    const EvpPkeyPtr key = new_key();
    CertSpec s = cert_spec("client", "Email CA", key.get(), ca_key.get());
    s.ca = false;
    s.san = san;
    s.subject_email = subject_email;
    s.eku = "clientAuth";
    const X509Ptr leaf = make_cert(s);
    VerifyOptions o;
    o.trust.ca_file = dir / "root.pem";
    o.purpose = getcert::Purpose::client;
    o.email = email;
    o.profile = profile;
    o.fetch_missing = false;
    auto v = getcert::verify_chain({model(leaf), model(ca)}, o);
    REQUIRE(v);
    return *v;
  }

  TempDir dir;
  EvpPkeyPtr root_key = new_key();
  X509Ptr root = make_cert(cert_spec("Email Root", "Email Root", root_key.get(), root_key.get()));
  EvpPkeyPtr ca_key = new_key();
  X509Ptr ca;
};

}  // namespace

TEST_CASE("an rfc822Name constraint naming a host permits mailboxes at that host only",
          "[verify]") {
  const EmailPki pki("permitted;email:example.test");
  const auto inside = pki.judge("email:ops@example.test", "", "ops@example.test");
  INFO(codes(inside));
  CHECK(inside.ok);
  for (const char* outside : {"email:ops@sub.example.test", "email:ops@other.test"}) {
    const auto v = pki.judge(outside);
    INFO(outside << "\n" << codes(v));
    CHECK_FALSE(v.ok);
    CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
  }
}

TEST_CASE("an rfc822Name constraint with a leading period permits subdomains, not the host",
          "[verify]") {
  const EmailPki pki("permitted;email:.example.test");
  const auto inside = pki.judge("email:ops@mail.example.test");
  INFO(codes(inside));
  CHECK(inside.ok);
  const auto host = pki.judge("email:ops@example.test");
  INFO(codes(host));
  CHECK_FALSE(host.ok);
  CHECK(has_code(host.errors, ProblemCode::name_constraint_violation));
}

TEST_CASE("an rfc822Name constraint naming a mailbox permits that mailbox only", "[verify]") {
  const EmailPki pki("permitted;email:ops@example.test");
  CHECK(pki.judge("email:ops@example.test").ok);
  const auto other = pki.judge("email:dev@example.test");
  INFO(codes(other));
  CHECK_FALSE(other.ok);
  CHECK(has_code(other.errors, ProblemCode::name_constraint_violation));
}

TEST_CASE("an excluded rfc822Name subtree refuses its mailboxes, under every profile", "[verify]") {
  const EmailPki pki("excluded;email:bad.test");
  CHECK(pki.judge("email:ops@good.test").ok);
  for (const auto profile :
       {getcert::Profile::webpki, getcert::Profile::openssl, getcert::Profile::rfc5280}) {
    const auto v = pki.judge("email:ops@bad.test", "", "", profile);
    INFO(to_string(profile) << "\n" << codes(v));
    CHECK_FALSE(v.ok);
    CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
  }
}

TEST_CASE("the subject's emailAddress is held to the rfc822Name constraints too", "[verify]") {
  // RFC 5280 4.2.1.10: legacy emailAddress attributes in the subject DN must be checked.
  const EmailPki pki("permitted;email:example.test");
  CHECK(pki.judge("email:ops@example.test", "ops@example.test").ok);
  const auto v = pki.judge("email:ops@example.test", "ops@other.test");
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v.errors, ProblemCode::name_constraint_violation));
}

TEST_CASE(
    "the email asked for must be one of the leaf's email SANs, even inside the permitted subtree",
    "[verify]") {
  const EmailPki pki("permitted;email:example.test");
  const auto v = pki.judge("email:ops@example.test", "", "dev@example.test");
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v.errors, ProblemCode::email_mismatch));
  CHECK_FALSE(has_code(v.errors, ProblemCode::name_constraint_violation));
}

namespace {

// A server chain: a root, a CA with `constraints` (marked as `critical` says) and a leaf for
// `host` with the DNS SANs `san` (and `leaf_constraints` of its own), judged for `host`.
struct ServerCase {
  std::string constraints;
  bool critical = true;
  std::string san;
  std::string host;
  std::string leaf_constraints;
};

Verification judge_server(const ServerCase& c, getcert::Profile profile) {
  TempDir dir;
  const EvpPkeyPtr root_key = new_key();
  const X509Ptr root =
      make_cert(cert_spec("Rules Root", "Rules Root", root_key.get(), root_key.get()));
  const EvpPkeyPtr ca_key = new_key();
  CertSpec ca_spec = cert_spec("Rules CA", "Rules Root", ca_key.get(), root_key.get());
  ca_spec.name_constraints = c.constraints;
  ca_spec.name_constraints_critical = c.critical;
  const X509Ptr ca = make_cert(ca_spec);
  const EvpPkeyPtr key = new_key();
  CertSpec leaf_spec = cert_spec(c.host, "Rules CA", key.get(), ca_key.get());
  leaf_spec.ca = false;
  leaf_spec.san = c.san;
  leaf_spec.name_constraints = c.leaf_constraints;
  const X509Ptr leaf = make_cert(leaf_spec);
  getcert::test::write_file(dir / "root.pem", getcert::to_pem({model(root)}));
  VerifyOptions o;
  o.trust.ca_file = dir / "root.pem";
  o.name = c.host;
  o.profile = profile;
  o.fetch_missing = false;
  auto v = getcert::verify_chain({model(leaf), model(ca)}, o);
  REQUIRE(v);
  return *v;
}

}  // namespace

TEST_CASE("a non-critical nameConstraints: a webpki warning, an rfc5280 error", "[verify]") {
  const ServerCase c{"permitted;DNS:good.test", false, "DNS:x.good.test", "x.good.test", ""};
  const auto webpki = judge_server(c, getcert::Profile::webpki);
  INFO(codes(webpki));
  CHECK(webpki.ok);
  CHECK(has_warning(webpki, ProblemCode::name_constraints_not_critical));
  const auto strict = judge_server(c, getcert::Profile::rfc5280);
  INFO(codes(strict));
  CHECK_FALSE(strict.ok);
  CHECK(has_code(strict.errors, ProblemCode::name_constraints_not_critical));
}

TEST_CASE("nameConstraints in the leaf: refused by rfc5280 and cabf, a warning elsewhere",
          "[verify]") {
  const ServerCase c{"", true, "DNS:a.test", "a.test", "permitted;DNS:a.test"};
  const auto webpki = judge_server(c, getcert::Profile::webpki);
  INFO(codes(webpki));
  CHECK(webpki.ok);
  CHECK(has_warning(webpki, ProblemCode::name_constraints_in_leaf));
  for (const auto profile : {getcert::Profile::rfc5280, getcert::Profile::cabf}) {
    const auto strict = judge_server(c, profile);
    INFO(codes(strict));
    CHECK_FALSE(strict.ok);
    CHECK(has_code(strict.errors, ProblemCode::name_constraints_in_leaf));
  }
  const auto openssl = judge_server(c, getcert::Profile::openssl);
  INFO(codes(openssl));
  CHECK(openssl.ok);
  CHECK(has_warning(openssl, ProblemCode::name_constraints_in_leaf));
}

TEST_CASE("a wildcard SAN whose expansion is excluded: excluded_wildcard (CVE-2025-61727)",
          "[verify]") {
  const ServerCase c{"excluded;DNS:bar.good.test", true, "DNS:*.good.test", "foo.good.test", ""};
  const auto webpki = judge_server(c, getcert::Profile::webpki);
  INFO(codes(webpki));
  CHECK_FALSE(webpki.ok);
  CHECK(has_code(webpki.errors, ProblemCode::excluded_wildcard));
  CHECK(judge_server(c, getcert::Profile::openssl).ok);
  // A wildcard two labels above the exclusion expands to no excluded name.
  const ServerCase deeper{"excluded;DNS:x.bar.good.test", true, "DNS:*.good.test", "foo.good.test",
                          ""};
  const auto fine = judge_server(deeper, getcert::Profile::webpki);
  INFO(codes(fine));
  CHECK(fine.ok);
}

TEST_CASE("a dNSName constraint with a leading period means subdomains only", "[verify]") {
  // mozilla::pkix, NSS, SChannel, rustls-webpki, Go and OpenSSL read ".good.test" so, and roots
  // in Mozilla's program (HARICA) rely on it: webpki and openssl accept it. RFC 5280 gives that
  // syntax to URI and email constraints only, so rfc5280 and cabf refuse it.
  for (const auto profile : {getcert::Profile::webpki, getcert::Profile::openssl}) {
    INFO(getcert::to_string(profile));
    const ServerCase sub{"permitted;DNS:.good.test", true, "DNS:x.good.test", "x.good.test", ""};
    const auto inside = judge_server(sub, profile);
    INFO(codes(inside));
    CHECK(inside.ok);
    CHECK_FALSE(has_warning(inside, ProblemCode::invalid_name_constraint));
    CHECK(has_warning(inside, ProblemCode::dns_constraint_leading_period) ==
          (profile == getcert::Profile::webpki));
    // The domain itself is not one of its subdomains.
    const ServerCase apex{"permitted;DNS:.good.test", true, "DNS:good.test", "good.test", ""};
    const auto outside = judge_server(apex, profile);
    INFO(codes(outside));
    CHECK_FALSE(outside.ok);
    CHECK(has_code(outside.errors, ProblemCode::name_constraint_violation));
    // Excluded the same way: subdomains out, the apex still allowed.
    const ServerCase excluded{"excluded;DNS:.bad.test", true, "DNS:x.bad.test", "x.bad.test", ""};
    CHECK_FALSE(judge_server(excluded, profile).ok);
    const ServerCase excluded_apex{"excluded;DNS:.bad.test", true, "DNS:bad.test", "bad.test", ""};
    CHECK(judge_server(excluded_apex, profile).ok);
  }
  for (const auto profile : {getcert::Profile::rfc5280, getcert::Profile::cabf}) {
    const ServerCase sub{"permitted;DNS:.good.test", true, "DNS:x.good.test", "x.good.test", ""};
    const auto strict = judge_server(sub, profile);
    INFO(codes(strict));
    CHECK_FALSE(strict.ok);
    CHECK(has_code(strict.errors, ProblemCode::dns_constraint_leading_period));
  }
}

TEST_CASE("a wildcard in a dNSName constraint is refused: no verifier defines it", "[verify]") {
  const ServerCase c{"permitted;DNS:*.good.test", true, "DNS:x.good.test", "x.good.test", ""};
  const auto webpki = judge_server(c, getcert::Profile::webpki);
  INFO(codes(webpki));
  CHECK_FALSE(webpki.ok);
  CHECK(has_code(webpki.errors, ProblemCode::invalid_name_constraint));
  const auto openssl = judge_server(c, getcert::Profile::openssl);
  CHECK(has_warning(openssl, ProblemCode::invalid_name_constraint));
}
