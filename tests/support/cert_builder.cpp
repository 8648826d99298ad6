#include "support/cert_builder.hpp"

#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <catch2/catch.hpp>

#include "support/files.hpp"

namespace getcert::test {
namespace {

using internal::X509Ptr;

// A key identifier the way CAs compute one: the SHA-1 of the key (here of its whole SPKI).
std::vector<unsigned char> key_id(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int n = i2d_PUBKEY(key, &der);
  const internal::OpensslBytes owned(der);
  REQUIRE(n > 0);
  std::vector<unsigned char> id(SHA_DIGEST_LENGTH);
  SHA1(der, static_cast<std::size_t>(n), id.data());
  return id;
}

void add_ext(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, nullptr, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  REQUIRE(ext != nullptr);
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  REQUIRE(added == 1);
}

void add_key_id(X509* cert, int nid, EVP_PKEY* key) {
  const auto id = key_id(key);
  internal::Asn1OctetStringPtr os(ASN1_OCTET_STRING_new());
  REQUIRE(ASN1_OCTET_STRING_set(os.get(), id.data(), static_cast<int>(id.size())) == 1);
  if (nid == NID_subject_key_identifier) {
    REQUIRE(X509_add1_ext_i2d(cert, nid, os.get(), 0, 0) == 1);
    return;
  }
  internal::AuthorityKeyIdPtr akid(AUTHORITY_KEYID_new());
  akid->keyid = os.release();
  REQUIRE(X509_add1_ext_i2d(cert, nid, akid.get(), 0, 0) == 1);
}

void add_entry(X509_NAME* name, const char* field, const std::string& value) {
  REQUIRE(X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                     reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                     0) == 1);
}

}  // namespace

internal::EvpPkeyPtr new_key() {
  internal::EvpPkeyPtr key(EVP_EC_gen("P-256"));
  REQUIRE(key);
  return key;
}

CertSpec cert_spec(const std::string& subject, const std::string& issuer, EVP_PKEY* key,
                   EVP_PKEY* signer) {
  CertSpec s;
  s.subject = subject;
  s.issuer = issuer;
  s.key = key;
  s.signer = signer;
  return s;
}

X509Ptr make_cert(const CertSpec& s) {
  static long serial = 1000;
  X509Ptr cert(X509_new());
  REQUIRE(X509_set_version(cert.get(), 2) == 1);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ++serial);
  add_entry(X509_get_subject_name(cert.get()), "CN", s.subject);
  if (!s.subject_email.empty()) {
    add_entry(X509_get_subject_name(cert.get()), "emailAddress", s.subject_email);
  }
  add_entry(X509_get_issuer_name(cert.get()), "CN", s.issuer);
  REQUIRE(ASN1_TIME_set(X509_getm_notBefore(cert.get()), static_cast<time_t>(s.not_before)));
  REQUIRE(ASN1_TIME_set(X509_getm_notAfter(cert.get()), static_cast<time_t>(s.not_after)));
  REQUIRE(X509_set_pubkey(cert.get(), s.key) == 1);
  if (s.ca) {
    add_ext(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    // Leaves go without: the CA/Browser Forum does not recommend one there.
    add_key_id(cert.get(), NID_subject_key_identifier, s.key);
  } else {
    add_ext(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert.get(), NID_key_usage, "critical,digitalSignature");
    add_ext(cert.get(), NID_ext_key_usage, s.eku);
  }
  if (!s.san.empty()) add_ext(cert.get(), NID_subject_alt_name, s.san);
  if (s.key != s.signer) add_key_id(cert.get(), NID_authority_key_identifier, s.signer);
  if (!s.name_constraints.empty()) {
    add_ext(cert.get(), NID_name_constraints,
            (s.name_constraints_critical ? "critical," : "") + s.name_constraints);
  }
  REQUIRE(X509_sign(cert.get(), s.signer, EVP_sha256()) > 0);
  return cert;
}

Certificate model(const X509Ptr& cert) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert.get(), &der);
  const internal::OpensslBytes owned(der);
  REQUIRE(n > 0);
  auto c = parse_certificate_der(std::vector<std::uint8_t>(der, der + n));
  REQUIRE(c);
  return *c;
}

X509Ptr resign(const X509Ptr& cert, EVP_PKEY* signer) {
  X509Ptr copy(X509_dup(cert.get()));
  REQUIRE(copy);
  REQUIRE(X509_sign(copy.get(), signer, EVP_sha256()) > 0);
  return copy;
}

X509Ptr with_extension(const X509Ptr& cert, const std::string& oid,
                       const std::vector<std::uint8_t>& value, bool critical, int position,
                       EVP_PKEY* signer) {
  X509Ptr copy(X509_dup(cert.get()));
  REQUIRE(copy);
  const internal::Asn1ObjectPtr object(OBJ_txt2obj(oid.c_str(), 1));
  REQUIRE(object);
  internal::Asn1OctetStringPtr data(ASN1_OCTET_STRING_new());
  REQUIRE(ASN1_OCTET_STRING_set(data.get(), value.data(), static_cast<int>(value.size())) == 1);
  const internal::X509ExtensionPtr ext(
      X509_EXTENSION_create_by_OBJ(nullptr, object.get(), critical ? 1 : 0, data.get()));
  REQUIRE(ext);
  REQUIRE(X509_add_ext(copy.get(), ext.get(), position) == 1);
  REQUIRE(X509_sign(copy.get(), signer, EVP_sha256()) > 0);
  return copy;
}

X509Ptr without_extensions(const X509Ptr& cert, EVP_PKEY* signer) {
  X509Ptr copy(X509_dup(cert.get()));
  REQUIRE(copy);
  while (X509_get_ext_count(copy.get()) > 0) {
    const internal::X509ExtensionPtr removed(X509_delete_ext(copy.get(), 0));
    REQUIRE(removed);
  }
  REQUIRE(X509_sign(copy.get(), signer, EVP_sha256()) > 0);
  return copy;
}

X509Ptr read_certificate(const std::string& path) {
  const std::string pem = read_file(path);
  const internal::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  REQUIRE(bio);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  REQUIRE(cert);
  return cert;
}

internal::EvpPkeyPtr read_private_key(const std::string& path) {
  const std::string pem = read_file(path);
  const internal::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  REQUIRE(bio);
  internal::EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  REQUIRE(key);
  return key;
}

}  // namespace getcert::test
