#pragma once

// RAII ownership for every handle and buffer getcert's code receives from a C library
// (OpenSSL, libidn2, c-ares, the system resolver, the kernel), BoringSSL-style: one deleter line
// per type. This header is the only place a *_free call may appear.
//
// `get0` results are borrowed and never wrapped; `get1`/`new` results are wrapped in the same
// statement; `set0`/`add0` take ownership, so call release() only after success.

#include <ares.h>
#include <idn2.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ct.h>
#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/pkcs12.h>
#include <openssl/pkcs7.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstddef>
#include <memory>

namespace getcert::internal {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const noexcept { Free(p); }
};

// Name and T are a type alias and a type, which parentheses would break.
#define GETCERT_OWNER(Name, T, FreeFn) \
  using Name = std::unique_ptr<T, Deleter<T, &(FreeFn)>>  // NOLINT(bugprone-macro-parentheses)

// Free functions that are macros, take extra arguments or return a value get a plain
// void(T*) wrapper so they fit Deleter.
inline void free_x509_stack(STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); }
inline void free_x509_stack_only(STACK_OF(X509) * s) { sk_X509_free(s); }
inline void free_crl_stack(STACK_OF(X509_CRL) * s) { sk_X509_CRL_pop_free(s, X509_CRL_free); }
inline void free_asn1_type_stack(STACK_OF(ASN1_TYPE) * s) {
  sk_ASN1_TYPE_pop_free(s, ASN1_TYPE_free);
}
inline void free_bio(BIO* b) { BIO_free_all(b); }
inline void free_sct_list(STACK_OF(SCT) * s) { SCT_LIST_free(s); }
inline void free_tls_feature(TLS_FEATURE* f) { TLS_FEATURE_free(f); }
inline void unload_provider(OSSL_PROVIDER* p) { static_cast<void>(OSSL_PROVIDER_unload(p)); }
inline void free_openssl_chars(char* p) { OPENSSL_free(p); }
inline void free_openssl_bytes(unsigned char* p) { OPENSSL_free(p); }
inline void free_idn2_chars(char* p) { idn2_free(p); }
inline void free_ares_servers(ares_addr_port_node* p) { ares_free_data(p); }

GETCERT_OWNER(SslCtxPtr, SSL_CTX, SSL_CTX_free);
GETCERT_OWNER(SslPtr, SSL, SSL_free);
GETCERT_OWNER(BioPtr, BIO, free_bio);
GETCERT_OWNER(BioMethodPtr, BIO_METHOD, BIO_meth_free);
GETCERT_OWNER(X509Ptr, X509, X509_free);
GETCERT_OWNER(X509StorePtr, X509_STORE, X509_STORE_free);
GETCERT_OWNER(X509StoreCtxPtr, X509_STORE_CTX, X509_STORE_CTX_free);
GETCERT_OWNER(X509StackPtr, STACK_OF(X509), free_x509_stack);
// A stack that borrows its certificates (they are owned elsewhere).
GETCERT_OWNER(X509RefStackPtr, STACK_OF(X509), free_x509_stack_only);
GETCERT_OWNER(X509ExtensionPtr, X509_EXTENSION, X509_EXTENSION_free);
GETCERT_OWNER(X509CrlPtr, X509_CRL, X509_CRL_free);
GETCERT_OWNER(X509CrlStackPtr, STACK_OF(X509_CRL), free_crl_stack);
GETCERT_OWNER(X509AlgorPtr, X509_ALGOR, X509_ALGOR_free);
GETCERT_OWNER(X509SigPtr, X509_SIG, X509_SIG_free);
GETCERT_OWNER(EvpPkeyPtr, EVP_PKEY, EVP_PKEY_free);
GETCERT_OWNER(EvpPkeyCtxPtr, EVP_PKEY_CTX, EVP_PKEY_CTX_free);
GETCERT_OWNER(EvpMdCtxPtr, EVP_MD_CTX, EVP_MD_CTX_free);
GETCERT_OWNER(EvpCipherCtxPtr, EVP_CIPHER_CTX, EVP_CIPHER_CTX_free);
GETCERT_OWNER(EvpMdPtr, EVP_MD, EVP_MD_free);
GETCERT_OWNER(EvpCipherPtr, EVP_CIPHER, EVP_CIPHER_free);
GETCERT_OWNER(EvpMacPtr, EVP_MAC, EVP_MAC_free);
GETCERT_OWNER(EvpMacCtxPtr, EVP_MAC_CTX, EVP_MAC_CTX_free);
GETCERT_OWNER(Pkcs7Ptr, PKCS7, PKCS7_free);
GETCERT_OWNER(Pkcs12Ptr, PKCS12, PKCS12_free);
GETCERT_OWNER(Pkcs8InfoPtr, PKCS8_PRIV_KEY_INFO, PKCS8_PRIV_KEY_INFO_free);
GETCERT_OWNER(GeneralNamesPtr, GENERAL_NAMES, GENERAL_NAMES_free);
GETCERT_OWNER(AuthorityInfoAccessPtr, AUTHORITY_INFO_ACCESS, AUTHORITY_INFO_ACCESS_free);
GETCERT_OWNER(BasicConstraintsPtr, BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free);
GETCERT_OWNER(CrlDistPointsPtr, CRL_DIST_POINTS, CRL_DIST_POINTS_free);
GETCERT_OWNER(NameConstraintsPtr, NAME_CONSTRAINTS, NAME_CONSTRAINTS_free);
GETCERT_OWNER(AuthorityKeyIdPtr, AUTHORITY_KEYID, AUTHORITY_KEYID_free);
GETCERT_OWNER(ExtKeyUsagePtr, EXTENDED_KEY_USAGE, EXTENDED_KEY_USAGE_free);
GETCERT_OWNER(Asn1OctetStringPtr, ASN1_OCTET_STRING, ASN1_OCTET_STRING_free);
GETCERT_OWNER(SctListPtr, STACK_OF(SCT), free_sct_list);
GETCERT_OWNER(TlsFeaturePtr, TLS_FEATURE, free_tls_feature);
GETCERT_OWNER(Asn1ObjectPtr, ASN1_OBJECT, ASN1_OBJECT_free);
GETCERT_OWNER(Asn1TimePtr, ASN1_TIME, ASN1_TIME_free);
GETCERT_OWNER(Asn1EnumeratedPtr, ASN1_ENUMERATED, ASN1_ENUMERATED_free);
// d2i_ASN1_SEQUENCE_ANY: the elements of a SEQUENCE, each owned.
GETCERT_OWNER(Asn1TypeStackPtr, STACK_OF(ASN1_TYPE), free_asn1_type_stack);
GETCERT_OWNER(BignumPtr, BIGNUM, BN_free);
GETCERT_OWNER(OcspResponsePtr, OCSP_RESPONSE, OCSP_RESPONSE_free);
GETCERT_OWNER(OcspBasicRespPtr, OCSP_BASICRESP, OCSP_BASICRESP_free);
GETCERT_OWNER(OcspRequestPtr, OCSP_REQUEST, OCSP_REQUEST_free);
GETCERT_OWNER(OcspCertIdPtr, OCSP_CERTID, OCSP_CERTID_free);
GETCERT_OWNER(OsslLibCtxPtr, OSSL_LIB_CTX, OSSL_LIB_CTX_free);
GETCERT_OWNER(OsslProviderPtr, OSSL_PROVIDER, unload_provider);
// Strings OpenSSL allocates (BN_bn2hex, i2s_..., X509_NAME_oneline, PEM_read_bio names).
GETCERT_OWNER(OpensslString, char, free_openssl_chars);
// Byte buffers OpenSSL allocates: i2d_* output, ASN1_STRING_to_UTF8, PEM_read_bio data.
GETCERT_OWNER(OpensslBytes, unsigned char, free_openssl_bytes);
// Strings libidn2 allocates (idn2_to_ascii_8z).
GETCERT_OWNER(Idn2String, char, free_idn2_chars);
GETCERT_OWNER(AddrinfoPtr, addrinfo, freeaddrinfo);
// c-ares: a channel (ares_destroy closes its sockets and ends its queries) and its answers.
GETCERT_OWNER(AresChannelPtr, ares_channeldata, ares_destroy);
GETCERT_OWNER(AresAddrinfoPtr, ares_addrinfo, ares_freeaddrinfo);
// The server list ares_get_servers_ports() hands out.
GETCERT_OWNER(AresServersPtr, ares_addr_port_node, free_ares_servers);

#undef GETCERT_OWNER

// An OpenSSL byte buffer holding a secret (an encoded private key): wiped, then freed.
class OpensslSecretBytes {
 public:
  OpensslSecretBytes() = default;
  OpensslSecretBytes(const OpensslSecretBytes&) = delete;
  OpensslSecretBytes& operator=(const OpensslSecretBytes&) = delete;
  OpensslSecretBytes(OpensslSecretBytes&&) = delete;
  OpensslSecretBytes& operator=(OpensslSecretBytes&&) = delete;
  ~OpensslSecretBytes() { OPENSSL_clear_free(data_, size_); }

  // For i2d_*(obj, out.out()): the buffer arrives through the pointer; set the length after.
  unsigned char** out() noexcept { return &data_; }
  void set_size(std::size_t size) noexcept { size_ = size; }
  const unsigned char* get() const noexcept { return data_; }

 private:
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Owns a file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Closes now and reports whether close() succeeded (a write may fail only at close).
  bool close() noexcept {
    const int fd = release();
    return fd < 0 || ::close(fd) == 0;
  }

 private:
  int fd_ = -1;
};

}  // namespace getcert::internal
