#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/objects.h>

#include <array>
#include <climits>

#include "algorithms.hpp"
#include "internal/encoding.hpp"
#include "internal/ossl.hpp"
#include "internal/x509_util.hpp"
#include "private_key.hpp"

namespace getcert::pkcs12 {
namespace detail {

namespace {

// der as one PKCS#8 PrivateKeyInfo with nothing after it; null otherwise.
internal::Pkcs8InfoPtr read_whole_pkcs8(Bytes der) {
  const unsigned char* p = der.data();
  internal::Pkcs8InfoPtr p8(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.size())));
  if (p != der.data() + der.size()) p8.reset();
  return p8;
}

}  // namespace

bool is_pkcs8(Bytes der) {
  const bool whole = read_whole_pkcs8(der) != nullptr;
  internal::clear_errors();
  return whole;
}

Result<ParsedKey> parse_pkcs8(Bytes der) {
  internal::clear_errors();
  internal::Pkcs8InfoPtr p8 = read_whole_pkcs8(der);
  if (!p8) {
    return fail(Errc::malformed_input, "malformed PKCS#12: private key is not valid PKCS#8",
                internal::drain_errors());
  }
  ParsedKey out;
  internal::OpensslSecretBytes enc;
  const int len = i2d_PKCS8_PRIV_KEY_INFO(p8.get(), enc.out());
  if (len <= 0)
    return fail(Errc::internal, "cannot re-encode a private key", internal::drain_errors());
  enc.set_size(static_cast<std::size_t>(len));
  out.der.assign(enc.get(), enc.get() + len);
  out.pkey.reset(EVP_PKCS82PKEY(p8.get()));
  if (out.pkey) {
    out.info = internal::key_info(out.pkey.get());
  } else {
    // Algorithms OpenSSL cannot load (GOST, ...) are still handed through as PKCS#8.
    internal::clear_errors();
    const ASN1_OBJECT* alg = nullptr;
    if (PKCS8_pkey_get0(&alg, nullptr, nullptr, nullptr, p8.get()) == 1 && alg != nullptr) {
      std::array<char, 128> buf{};
      OBJ_obj2txt(buf.data(), static_cast<int>(buf.size()), alg, 1);
      out.info.type = describe_oid(buf.data());
    } else {
      out.info.type = "unknown";
    }
  }
  return out;
}

}  // namespace detail

PrivateKey::PrivateKey(SecureBytes pkcs8_der, KeyInfo info, BagAttributes attributes)
    : der_(std::move(pkcs8_der)), info_(std::move(info)), attributes_(std::move(attributes)) {}

SecureString PrivateKey::pem() const {
  return internal::pem_encode<SecureString>("PRIVATE KEY", der_.data(), der_.size());
}

Result<SecureString> PrivateKey::encrypted_pem(std::string_view passphrase,
                                               std::uint32_t iterations) const {
  if (passphrase.empty()) {
    return fail(Errc::invalid_argument, "an encrypted private key needs a non-empty passphrase");
  }
  if (iterations < 1000 || iterations > INT_MAX || passphrase.size() > INT_MAX) {
    return fail(Errc::invalid_argument, "PBKDF2 iteration count must be at least 1000");
  }
  internal::clear_errors();
  const unsigned char* p = der_.data();
  internal::Pkcs8InfoPtr p8(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der_.size())));
  if (!p8) return fail(Errc::internal, "private key cannot be re-read", internal::drain_errors());
  // Explicit PRF: OpenSSL's default has changed between versions; SHA-256 is what every
  // current reader (OpenSSL 1.1+, Java 8u151+, Windows 10+) accepts.
  internal::X509AlgorPtr pbe(PKCS5_pbe2_set_iv_ex(EVP_aes_256_cbc(), static_cast<int>(iterations),
                                                  nullptr, 16, nullptr, NID_hmacWithSHA256,
                                                  nullptr));
  if (!pbe) return fail(Errc::internal, "cannot set up PBES2", internal::drain_errors());
  internal::X509SigPtr sig(PKCS8_set0_pbe_ex(passphrase.data(), static_cast<int>(passphrase.size()),
                                             p8.get(), pbe.get(), nullptr, nullptr));
  if (!sig) return fail(Errc::internal, "private key encryption failed", internal::drain_errors());
  static_cast<void>(pbe.release());  // now owned by sig
  unsigned char* enc = nullptr;
  const int len = i2d_X509_SIG(sig.get(), &enc);
  const internal::OpensslBytes owned(enc);
  if (len <= 0)
    return fail(Errc::internal, "cannot encode the encrypted key", internal::drain_errors());
  return internal::pem_encode<SecureString>("ENCRYPTED PRIVATE KEY", enc,
                                            static_cast<std::size_t>(len));
}

}  // namespace getcert::pkcs12
