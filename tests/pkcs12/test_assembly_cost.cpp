// Chain assembly under files made to make it slow: thousands of certificates that share one
// name, hundreds of keys each facing a thousand look-alike issuers. The work is counted
// (Info::signature_checks, DecodeOptions::max_signature_checks), never timed: it must grow
// with the number of certificates, and a file past the budget fails with limit_exceeded.

#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <string>
#include <vector>

#include "getcert/pkcs12.hpp"
#include "internal/ossl.hpp"
#include "support/asn1.hpp"

namespace getcert::pkcs12::test {
namespace {

using namespace getcert::test::asn1;  // NOLINT(google-build-using-namespace)
using internal::EvpPkeyPtr;
using internal::X509Ptr;

EvpPkeyPtr ec_key() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  REQUIRE(key);
  return key;
}

// A certificate CN=subject issued by CN=issuer for `pub`, signed with `signer`. Without
// keyCertSign in its key usage, OpenSSL never calls it self-signed, even when it signs itself.
X509Ptr make_cert(const std::string& subject, const std::string& issuer, EVP_PKEY* pub,
                  EVP_PKEY* signer, long serial) {
  X509Ptr x(X509_new());
  REQUIRE(x);
  REQUIRE(X509_set_version(x.get(), 2) == 1);
  REQUIRE(ASN1_INTEGER_set(X509_get_serialNumber(x.get()), serial) == 1);
  const auto name = [](const std::string& cn) {
    X509_NAME* n = X509_NAME_new();
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    return n;
  };
  X509_NAME* s = name(subject);
  X509_NAME* i = name(issuer);
  REQUIRE(X509_set_subject_name(x.get(), s) == 1);
  REQUIRE(X509_set_issuer_name(x.get(), i) == 1);
  X509_NAME_free(s);
  X509_NAME_free(i);
  REQUIRE(X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600) != nullptr);
  REQUIRE(X509_gmtime_adj(X509_getm_notAfter(x.get()), 86400L * 30) != nullptr);
  REQUIRE(X509_set_pubkey(x.get(), pub) == 1);
  X509_EXTENSION* ku = X509V3_EXT_conf_nid(nullptr, nullptr, NID_key_usage, "digitalSignature");
  REQUIRE(ku != nullptr);
  REQUIRE(X509_add_ext(x.get(), ku, -1) == 1);
  X509_EXTENSION_free(ku);
  REQUIRE(X509_sign(x.get(), signer, EVP_sha256()) > 0);
  return x;
}

Der der_of(X509* x) {
  unsigned char* out = nullptr;
  const int len = i2d_X509(x, &out);
  REQUIRE(len > 0);
  Der der(out, out + len);
  OPENSSL_free(out);
  return der;
}

Der pkcs8_of(EVP_PKEY* key) {
  internal::Pkcs8InfoPtr p8(EVP_PKEY2PKCS8(key));
  REQUIRE(p8);
  unsigned char* out = nullptr;
  const int len = i2d_PKCS8_PRIV_KEY_INFO(p8.get(), &out);
  REQUIRE(len > 0);
  Der der(out, out + len);
  OPENSSL_free(out);
  return der;
}

Der cert_bag(X509* x) {
  return seq({oid("1.2.840.113549.1.12.10.1.3"),
              explicit0(seq({oid("1.2.840.113549.1.9.22.1"), explicit0(octets(der_of(x)))}))});
}

Der key_bag(EVP_PKEY* key) {
  return seq({oid("1.2.840.113549.1.12.10.1.1"), explicit0(pkcs8_of(key))});
}

// PFX v3 without MAC or encryption: one data safe holding `bags`.
std::vector<std::uint8_t> pfx_of(const std::vector<Der>& bags) {
  const Der safe = seq({oid("1.2.840.113549.1.7.1"), explicit0(octets(seq(bags)))});
  const Der auth_safe = seq({oid("1.2.840.113549.1.7.1"), explicit0(octets(seq({safe})))});
  return seq({integer(3), auth_safe});
}

}  // namespace

TEST_CASE("6,000 certificates named CN=A by CN=A: assembly work stays linear", "[pkcs12]") {
  // Two keys, each certificate carrying one and signed by the other: none is self-signed, and
  // every certificate of one key is a valid issuer of every certificate of the other. The old
  // chain walk went through all 6,000, comparing each step with every certificate.
  const EvpPkeyPtr key = ec_key();
  const EvpPkeyPtr other = ec_key();
  constexpr long kCerts = 6000;
  std::vector<Der> bags;
  bags.push_back(key_bag(key.get()));
  for (long n = 1; n <= kCerts; ++n) {
    const bool mine = n % 2 == 1;
    bags.push_back(cert_bag(
        make_cert("A", "A", mine ? key.get() : other.get(), mine ? other.get() : key.get(), n)
            .get()));
  }
  const auto decoded = decode(pfx_of(bags));
  INFO((decoded ? std::string() : decoded.error().message));
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->identities.size() == 1);
  const auto& id = decoded->identities[0];
  CHECK(id.leaf.has_value());
  // The chain stops at a bounded length; every certificate is accounted for.
  CHECK(id.chain.size() <= 100);
  CHECK(id.chain.size() + 1 + decoded->extra_certs.size() == static_cast<std::size_t>(kCerts));
  // A few signature checks per link (a key that failed once is not tried again), not per pair.
  CHECK(decoded->info.signature_checks <= 3 * (id.chain.size() + 1));
}

TEST_CASE("300 keys facing 1,000 look-alike issuers: counted, and bounded by the budget",
          "[pkcs12]") {
  // Every leaf names CN=Issuer, as do the 1,000 candidates; none of them signed the leaves.
  const EvpPkeyPtr real_issuer = ec_key();
  constexpr int kKeys = 300;
  constexpr int kCandidates = 1000;
  std::vector<EvpPkeyPtr> keys;
  std::vector<Der> leaves;
  long serial = 1;
  for (int k = 0; k < kKeys; ++k) {
    keys.push_back(ec_key());
    leaves.push_back(cert_bag(make_cert("leaf " + std::to_string(k), "Issuer", keys.back().get(),
                                        real_issuer.get(), serial++)
                                  .get()));
  }

  SECTION("candidates sharing one key: one signature check per leaf") {
    const EvpPkeyPtr impostor = ec_key();
    std::vector<Der> bags = leaves;
    for (const auto& k : keys) bags.push_back(key_bag(k.get()));
    for (int c = 0; c < kCandidates; ++c) {
      bags.push_back(
          cert_bag(make_cert("Issuer", "Root", impostor.get(), impostor.get(), serial++).get()));
    }
    const auto decoded = decode(pfx_of(bags));
    INFO((decoded ? std::string() : decoded.error().message));
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->identities.size() == static_cast<std::size_t>(kKeys));
    for (const auto& id : decoded->identities) {
      CHECK(id.leaf.has_value());
      CHECK(id.chain.empty());
    }
    CHECK(decoded->info.signature_checks == static_cast<std::uint64_t>(kKeys));
  }
  SECTION("candidates with keys of their own: the budget ends it with limit_exceeded") {
    std::vector<Der> bags = leaves;
    for (const auto& k : keys) bags.push_back(key_bag(k.get()));
    for (int c = 0; c < kCandidates; ++c) {
      const EvpPkeyPtr own = ec_key();
      bags.push_back(cert_bag(make_cert("Issuer", "Root", own.get(), own.get(), serial++).get()));
    }
    DecodeOptions options;
    options.max_signature_checks = 2000;  // 300 x 1,000 would be 300,000
    const auto decoded = decode(pfx_of(bags), options);
    REQUIRE_FALSE(decoded.has_value());
    INFO(decoded.error().message);
    CHECK(decoded.error().code == Errc::limit_exceeded);
    CHECK(decoded.error().message.find("2000 signature checks") != std::string::npos);
    CHECK(decoded.error().message.find("max_signature_checks") != std::string::npos);
  }
}

}  // namespace getcert::pkcs12::test
