#pragma once

// RAII ownership for every OpenSSL handle getcert touches, BoringSSL-style: one deleter line
// per type. `get0` results are borrowed and never wrapped; `get1`/`new` results are wrapped in
// the same statement; `set0`/`add0` take ownership, so call release() only after success.

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

namespace getcert::detail {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const noexcept { Free(p); }
};

// Name and T are a type alias and a type, which parentheses would break.
#define GETCERT_OSSL_PTR(Name, T, FreeFn) \
  using Name = std::unique_ptr<T, Deleter<T, &(FreeFn)>>  // NOLINT(bugprone-macro-parentheses)

inline void free_x509_stack(STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); }
inline void free_x509_stack_only(STACK_OF(X509) * s) { sk_X509_free(s); }
inline void free_bio(BIO* b) { BIO_free_all(b); }

GETCERT_OSSL_PTR(SslCtxPtr, SSL_CTX, SSL_CTX_free);
GETCERT_OSSL_PTR(SslPtr, SSL, SSL_free);
GETCERT_OSSL_PTR(BioPtr, BIO, free_bio);
GETCERT_OSSL_PTR(X509Ptr, X509, X509_free);
GETCERT_OSSL_PTR(X509StorePtr, X509_STORE, X509_STORE_free);
GETCERT_OSSL_PTR(X509StoreCtxPtr, X509_STORE_CTX, X509_STORE_CTX_free);
GETCERT_OSSL_PTR(X509StackPtr, STACK_OF(X509), free_x509_stack);
// A stack that borrows its certificates (they are owned elsewhere).
GETCERT_OSSL_PTR(X509RefStackPtr, STACK_OF(X509), free_x509_stack_only);
GETCERT_OSSL_PTR(EvpPkeyPtr, EVP_PKEY, EVP_PKEY_free);
GETCERT_OSSL_PTR(EvpPkeyCtxPtr, EVP_PKEY_CTX, EVP_PKEY_CTX_free);
GETCERT_OSSL_PTR(EvpMdCtxPtr, EVP_MD_CTX, EVP_MD_CTX_free);
GETCERT_OSSL_PTR(EvpCipherCtxPtr, EVP_CIPHER_CTX, EVP_CIPHER_CTX_free);
GETCERT_OSSL_PTR(EvpMdPtr, EVP_MD, EVP_MD_free);
GETCERT_OSSL_PTR(EvpCipherPtr, EVP_CIPHER, EVP_CIPHER_free);
GETCERT_OSSL_PTR(EvpMacPtr, EVP_MAC, EVP_MAC_free);
GETCERT_OSSL_PTR(EvpMacCtxPtr, EVP_MAC_CTX, EVP_MAC_CTX_free);
GETCERT_OSSL_PTR(Pkcs12Ptr, PKCS12, PKCS12_free);
GETCERT_OSSL_PTR(Pkcs8InfoPtr, PKCS8_PRIV_KEY_INFO, PKCS8_PRIV_KEY_INFO_free);
GETCERT_OSSL_PTR(GeneralNamesPtr, GENERAL_NAMES, GENERAL_NAMES_free);
GETCERT_OSSL_PTR(AuthorityInfoAccessPtr, AUTHORITY_INFO_ACCESS, AUTHORITY_INFO_ACCESS_free);
GETCERT_OSSL_PTR(BasicConstraintsPtr, BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free);
GETCERT_OSSL_PTR(Asn1ObjectPtr, ASN1_OBJECT, ASN1_OBJECT_free);
GETCERT_OSSL_PTR(Asn1TimePtr, ASN1_TIME, ASN1_TIME_free);
GETCERT_OSSL_PTR(BignumPtr, BIGNUM, BN_free);
GETCERT_OSSL_PTR(OcspResponsePtr, OCSP_RESPONSE, OCSP_RESPONSE_free);
GETCERT_OSSL_PTR(OcspBasicRespPtr, OCSP_BASICRESP, OCSP_BASICRESP_free);
GETCERT_OSSL_PTR(OsslLibCtxPtr, OSSL_LIB_CTX, OSSL_LIB_CTX_free);

#undef GETCERT_OSSL_PTR

// OPENSSL_free for strings OpenSSL allocates (BN_bn2hex, i2s_..., X509_NAME_oneline).
struct OpensslStringDeleter {
  void operator()(char* p) const noexcept { OPENSSL_free(p); }
};
using OpensslString = std::unique_ptr<char, OpensslStringDeleter>;

// Clears the thread's OpenSSL error queue; call before an OpenSSL sequence whose
// failure will be reported with drain_errors().
inline void clear_errors() noexcept { ERR_clear_error(); }

// Several OpenSSL "functions" are macros with C casts; they are wrapped here, in one place,
// so the rest of the code builds with -Wold-style-cast.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
inline bool set_sni(SSL* ssl, const char* name) { return SSL_set_tlsext_host_name(ssl, name) == 1; }
inline void request_ocsp_staple(SSL* ssl) {
  SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp);
}
inline long get_ocsp_staple(SSL* ssl, const unsigned char** out) {
  unsigned char* p = nullptr;
  const long len = SSL_get_tlsext_status_ocsp_resp(ssl, &p);
  *out = p;
  return len;
}
#pragma GCC diagnostic pop

// Drains the thread's OpenSSL error queue into one "; "-separated line (empty if none).
std::string drain_errors();

}  // namespace getcert::detail
