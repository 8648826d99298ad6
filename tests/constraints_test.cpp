// Name constraints (RFC 5280 4.2.1.10): rfc822Name constraints in their three forms (a whole
// mailbox, a host, a .domain) over the email SANs and the subject's emailAddress of client
// certificates, with VerifyOptions::email; and the rules of verify/constraints.cpp over server
// chains (where the extension may be, how it is marked, dNSName syntax, wildcards reaching an
// excluded subtree), under each profile. Every certificate is made here with OpenSSL's API
// (P-256 keys).

#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/verify.hpp"
#include "internal/owners.hpp"
#include "support/files.hpp"

using getcert::Certificate;
using getcert::ProblemCode;
using getcert::Verification;
using getcert::VerifyOptions;
using getcert::internal::EvpPkeyPtr;
using getcert::internal::X509Ptr;
using getcert::test::TempDir;

namespace {

const std::int64_t kNow = static_cast<std::int64_t>(std::time(nullptr));
constexpr std::int64_t kDay = 86400;

EvpPkeyPtr new_key() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  REQUIRE(key);
  return key;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  REQUIRE(ext != nullptr);
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  REQUIRE(added == 1);
}

void add_entry(X509_NAME* name, const char* field, const std::string& value) {
  REQUIRE(X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                     reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                     0) == 1);
}

struct Extras {
  bool constraints_critical = true;
  std::string eku = "clientAuth";
};

// issuer == nullptr: self-signed. An empty `san` or `subject_email` leaves it out; an empty
// `constraints` ("permitted;email:example.test") makes no nameConstraints extension.
X509Ptr make_cert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* signer, bool ca,
                  const std::string& constraints = "", const std::string& san = "",
                  const std::string& subject_email = "", const Extras& extras = {}) {
  static long serial = 5000;
  X509Ptr cert(X509_new());
  REQUIRE(X509_set_version(cert.get(), 2) == 1);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ++serial);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  add_entry(subject, "CN", cn);
  if (!subject_email.empty()) add_entry(subject, "emailAddress", subject_email);
  REQUIRE(X509_set_issuer_name(cert.get(),
                               issuer != nullptr ? X509_get_subject_name(issuer) : subject) == 1);
  REQUIRE(ASN1_TIME_set(X509_getm_notBefore(cert.get()), static_cast<time_t>(kNow - kDay)));
  REQUIRE(ASN1_TIME_set(X509_getm_notAfter(cert.get()), static_cast<time_t>(kNow + 30 * kDay)));
  REQUIRE(X509_set_pubkey(cert.get(), key) == 1);
  X509* signed_by = issuer != nullptr ? issuer : cert.get();
  add_ext(cert.get(), signed_by, NID_subject_key_identifier, "hash");
  if (issuer != nullptr) add_ext(cert.get(), signed_by, NID_authority_key_identifier, "keyid");
  if (ca) {
    add_ext(cert.get(), signed_by, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert.get(), signed_by, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_ext(cert.get(), signed_by, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert.get(), signed_by, NID_key_usage, "critical,digitalSignature");
    add_ext(cert.get(), signed_by, NID_ext_key_usage, extras.eku);
  }
  if (!san.empty()) add_ext(cert.get(), signed_by, NID_subject_alt_name, san);
  if (!constraints.empty()) {
    add_ext(cert.get(), signed_by, NID_name_constraints,
            (extras.constraints_critical ? "critical," : "") + constraints);
  }
  REQUIRE(X509_sign(cert.get(), signer, EVP_sha256()) > 0);
  return cert;
}

Certificate model(const X509Ptr& cert) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert.get(), &der);
  const getcert::internal::OpensslBytes owned(der);
  REQUIRE(n > 0);
  auto c = getcert::parse_certificate_der(std::vector<std::uint8_t>(der, der + n));
  REQUIRE(c);
  return *c;
}

bool has_code(const Verification& v, ProblemCode code) {
  return std::any_of(v.errors.begin(), v.errors.end(),
                     [&](const getcert::VerifyProblem& p) { return p.code == code; });
}

bool has_warning(const Verification& v, ProblemCode code) {
  return std::any_of(v.warnings.begin(), v.warnings.end(),
                     [&](const getcert::VerifyNote& n) { return n.code == code; });
}

std::string codes(const Verification& v) {
  std::string out;
  for (const auto& e : v.errors) {
    out += "[" + std::to_string(e.depth) + "] " + std::string(to_string(e.code)) + ": " + e.reason +
           "\n";
  }
  return out;
}

// A root, and under it a CA with the given rfc822Name constraints that issues client leaves.
struct EmailPki {
  explicit EmailPki(const std::string& constraints)
      : ca(make_cert("Email CA", ca_key.get(), root.get(), root_key.get(), true, constraints)) {
    getcert::test::write_file(dir / "root.pem", getcert::to_pem({model(root)}));
  }

  // Verifies a client leaf with these SANs and subject emailAddress, asking for `email`.
  Verification judge(const std::string& san, const std::string& subject_email = "",
                     const std::string& email = "",
                     getcert::Profile profile = getcert::Profile::webpki) const {
    const EvpPkeyPtr key = new_key();
    const X509Ptr leaf =
        make_cert("client", key.get(), ca.get(), ca_key.get(), false, "", san, subject_email);
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
  X509Ptr root = make_cert("Email Root", root_key.get(), nullptr, root_key.get(), true);
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
    CHECK(has_code(v, ProblemCode::name_constraint_violation));
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
  CHECK(has_code(host, ProblemCode::name_constraint_violation));
}

TEST_CASE("an rfc822Name constraint naming a mailbox permits that mailbox only", "[verify]") {
  const EmailPki pki("permitted;email:ops@example.test");
  CHECK(pki.judge("email:ops@example.test").ok);
  const auto other = pki.judge("email:dev@example.test");
  INFO(codes(other));
  CHECK_FALSE(other.ok);
  CHECK(has_code(other, ProblemCode::name_constraint_violation));
}

TEST_CASE("an excluded rfc822Name subtree refuses its mailboxes, under every profile", "[verify]") {
  const EmailPki pki("excluded;email:bad.test");
  CHECK(pki.judge("email:ops@good.test").ok);
  for (const auto profile :
       {getcert::Profile::webpki, getcert::Profile::openssl, getcert::Profile::rfc5280}) {
    const auto v = pki.judge("email:ops@bad.test", "", "", profile);
    INFO(to_string(profile) << "\n" << codes(v));
    CHECK_FALSE(v.ok);
    CHECK(has_code(v, ProblemCode::name_constraint_violation));
  }
}

TEST_CASE("the subject's emailAddress is held to the rfc822Name constraints too", "[verify]") {
  // RFC 5280 4.2.1.10: legacy emailAddress attributes in the subject DN must be checked.
  const EmailPki pki("permitted;email:example.test");
  CHECK(pki.judge("email:ops@example.test", "ops@example.test").ok);
  const auto v = pki.judge("email:ops@example.test", "ops@other.test");
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, ProblemCode::name_constraint_violation));
}

TEST_CASE(
    "the email asked for must be one of the leaf's email SANs, even inside the permitted subtree",
    "[verify]") {
  const EmailPki pki("permitted;email:example.test");
  const auto v = pki.judge("email:ops@example.test", "", "dev@example.test");
  INFO(codes(v));
  CHECK_FALSE(v.ok);
  CHECK(has_code(v, ProblemCode::email_mismatch));
  CHECK_FALSE(has_code(v, ProblemCode::name_constraint_violation));
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
  const X509Ptr root = make_cert("Rules Root", root_key.get(), nullptr, root_key.get(), true);
  const EvpPkeyPtr ca_key = new_key();
  Extras ca_extras;
  ca_extras.constraints_critical = c.critical;
  const X509Ptr ca = make_cert("Rules CA", ca_key.get(), root.get(), root_key.get(), true,
                               c.constraints, "", "", ca_extras);
  const EvpPkeyPtr key = new_key();
  Extras leaf_extras;
  leaf_extras.eku = "serverAuth";
  const X509Ptr leaf = make_cert(c.host, key.get(), ca.get(), ca_key.get(), false,
                                 c.leaf_constraints, c.san, "", leaf_extras);
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
  CHECK(has_code(strict, ProblemCode::name_constraints_not_critical));
}

TEST_CASE("nameConstraints in the leaf: refused by webpki, a warning under openssl", "[verify]") {
  const ServerCase c{"", true, "DNS:a.test", "a.test", "permitted;DNS:a.test"};
  const auto webpki = judge_server(c, getcert::Profile::webpki);
  INFO(codes(webpki));
  CHECK_FALSE(webpki.ok);
  CHECK(has_code(webpki, ProblemCode::name_constraints_in_leaf));
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
  CHECK(has_code(webpki, ProblemCode::excluded_wildcard));
  CHECK(judge_server(c, getcert::Profile::openssl).ok);
  // A wildcard two labels above the exclusion expands to no excluded name.
  const ServerCase deeper{"excluded;DNS:x.bar.good.test", true, "DNS:*.good.test", "foo.good.test",
                          ""};
  const auto fine = judge_server(deeper, getcert::Profile::webpki);
  INFO(codes(fine));
  CHECK(fine.ok);
}

TEST_CASE("a dNSName constraint with a leading period is not a DNS name", "[verify]") {
  const ServerCase c{"permitted;DNS:.good.test", true, "DNS:x.good.test", "x.good.test", ""};
  const auto webpki = judge_server(c, getcert::Profile::webpki);
  INFO(codes(webpki));
  CHECK_FALSE(webpki.ok);
  CHECK(has_code(webpki, ProblemCode::invalid_name_constraint));
  const auto openssl = judge_server(c, getcert::Profile::openssl);
  CHECK(has_warning(openssl, ProblemCode::invalid_name_constraint));
}
