#include <openssl/pkcs7.h>

#include "getcert/certificate.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"

namespace getcert {
namespace {

Result<std::vector<Certificate>> from_pkcs7(PKCS7* p7) {
  STACK_OF(X509)* certs = nullptr;  // get0
  if (PKCS7_type_is_signed(p7) != 0 && p7->d.sign != nullptr) certs = p7->d.sign->cert;
  std::vector<Certificate> out;
  for (int i = 0; i < sk_X509_num(certs); ++i) {
    GETCERT_TRY_ASSIGN(auto c, internal::certificate_from_x509(sk_X509_value(certs, i)));
    out.push_back(std::move(c));
  }
  if (out.empty()) return fail(Errc::malformed_input, "the PKCS#7 bundle holds no certificate");
  return out;
}

}  // namespace

Result<std::vector<Certificate>> parse_certificates(const std::vector<std::uint8_t>& bytes) {
  internal::clear_errors();
  if (bytes.empty()) return fail(Errc::malformed_input, "empty input");
  if (auto der = parse_certificate_der(bytes)) return std::vector<Certificate>{std::move(*der)};
  const unsigned char* p = bytes.data();
  if (internal::Pkcs7Ptr p7(d2i_PKCS7(nullptr, &p, static_cast<long>(bytes.size()))); p7) {
    return from_pkcs7(p7.get());
  }
  internal::clear_errors();
  const std::string text(bytes.begin(), bytes.end());
  if (text.find("-----BEGIN PKCS7-----") != std::string::npos) {
    internal::BioPtr mem(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    internal::Pkcs7Ptr p7(PEM_read_bio_PKCS7(mem.get(), nullptr, nullptr, nullptr));
    internal::clear_errors();
    if (p7) return from_pkcs7(p7.get());
  }
  if (text.find("-----BEGIN") != std::string::npos) return parse_certificates_pem(text);
  return fail(Errc::malformed_input,
              "not a certificate (expected PEM, DER or PKCS#7 certificates)");
}

}  // namespace getcert
