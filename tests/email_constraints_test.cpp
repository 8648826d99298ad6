// Email addresses in client certificates: rfc822Name name constraints (RFC 5280 4.2.1.10, in its
// three forms: a whole mailbox, a host, a .domain) apply to the leaf's email SANs and to the
// emailAddress attributes of its subject, and VerifyOptions::email must be one of its email
// SANs. Every certificate is made here with OpenSSL's API (P-256 keys); the chains are judged
// for the client purpose, the way a server checks the certificate a client presents.

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

// issuer == nullptr: self-signed. An empty `san` or `subject_email` leaves it out; an empty
// `constraints` ("permitted;email:example.test") makes no nameConstraints extension.
X509Ptr make_cert(const std::string& cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* signer, bool ca,
                  const std::string& constraints = "", const std::string& san = "",
                  const std::string& subject_email = "") {
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
    add_ext(cert.get(), signed_by, NID_ext_key_usage, "clientAuth");
  }
  if (!san.empty()) add_ext(cert.get(), signed_by, NID_subject_alt_name, san);
  if (!constraints.empty()) {
    add_ext(cert.get(), signed_by, NID_name_constraints, "critical," + constraints);
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
