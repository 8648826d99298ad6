#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/objects.h>

#include <array>
#include <climits>

#include "algorithms.hpp"
#include "detail/x509_util.hpp"
#include "keys.hpp"
#include "ossl_extra.hpp"

namespace getcert::pkcs12 {
namespace detail {

using getcert::detail::clear_errors;
using getcert::detail::drain_errors;
using getcert::detail::EvpPkeyPtr;
using getcert::detail::Pkcs8InfoPtr;

Result<ParsedKey> parse_pkcs8(Bytes der) {
  clear_errors();
  const unsigned char* p = der.data();
  Pkcs8InfoPtr p8(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.size())));
  if (!p8 || p != der.data() + der.size()) {
    return fail(Errc::malformed_input, "malformed PKCS#12: private key is not valid PKCS#8",
                drain_errors());
  }
  ParsedKey out;
  unsigned char* enc = nullptr;
  const int len = i2d_PKCS8_PRIV_KEY_INFO(p8.get(), &enc);
  if (len <= 0) return fail(Errc::internal, "cannot re-encode a private key", drain_errors());
  out.der.assign(enc, enc + len);
  OPENSSL_clear_free(enc, static_cast<std::size_t>(len));
  out.pkey.reset(EVP_PKCS82PKEY(p8.get()));
  if (out.pkey) {
    out.info = getcert::detail::key_info(out.pkey.get());
  } else {
    // Algorithms OpenSSL cannot load (GOST, ...) are still handed through as PKCS#8.
    clear_errors();
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

SecureString pem_encode(std::string_view label, Bytes der) {
  SecureString out;
  out.reserve(der.size() * 4 / 3 + der.size() / 48 + 80);
  out += "-----BEGIN ";
  out.append(label.data(), label.size());
  out += "-----\n";
  constexpr std::size_t kChunk = 48;  // 48 bytes -> one 64-column base64 line
  std::array<unsigned char, 65> line{};
  for (std::size_t off = 0; off < der.size(); off += kChunk) {
    const std::size_t n = std::min(kChunk, der.size() - off);
    const int len = EVP_EncodeBlock(line.data(), der.data() + off, static_cast<int>(n));
    out.append(reinterpret_cast<const char*>(line.data()), static_cast<std::size_t>(len));
    out += '\n';
  }
  OPENSSL_cleanse(line.data(), line.size());
  out += "-----END ";
  out.append(label.data(), label.size());
  out += "-----\n";
  return out;
}

}  // namespace detail

PrivateKey::PrivateKey(SecureBytes pkcs8_der, KeyInfo info, BagAttributes attributes)
    : der_(std::move(pkcs8_der)), info_(std::move(info)), attributes_(std::move(attributes)) {}

SecureString PrivateKey::pem() const { return detail::pem_encode("PRIVATE KEY", der_); }

Result<SecureString> PrivateKey::encrypted_pem(std::string_view passphrase,
                                               std::uint32_t iterations) const {
  using getcert::detail::clear_errors;
  using getcert::detail::drain_errors;
  if (passphrase.empty()) {
    return fail(Errc::invalid_argument, "an encrypted private key needs a non-empty passphrase");
  }
  if (iterations < 1000 || iterations > INT_MAX || passphrase.size() > INT_MAX) {
    return fail(Errc::invalid_argument, "PBKDF2 iteration count must be at least 1000");
  }
  clear_errors();
  const unsigned char* p = der_.data();
  getcert::detail::Pkcs8InfoPtr p8(
      d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der_.size())));
  if (!p8) return fail(Errc::internal, "private key cannot be re-read", drain_errors());
  // Explicit PRF: OpenSSL's default has changed between versions; SHA-256 is what every
  // current reader (OpenSSL 1.1+, Java 8u151+, Windows 10+) accepts.
  detail::X509AlgorPtr pbe(PKCS5_pbe2_set_iv_ex(EVP_aes_256_cbc(), static_cast<int>(iterations),
                                                nullptr, 16, nullptr, NID_hmacWithSHA256, nullptr));
  if (!pbe) return fail(Errc::internal, "cannot set up PBES2", drain_errors());
  detail::X509SigPtr sig(PKCS8_set0_pbe_ex(passphrase.data(), static_cast<int>(passphrase.size()),
                                           p8.get(), pbe.get(), nullptr, nullptr));
  if (!sig) return fail(Errc::internal, "private key encryption failed", drain_errors());
  static_cast<void>(pbe.release());  // now owned by sig
  unsigned char* enc = nullptr;
  const int len = i2d_X509_SIG(sig.get(), &enc);
  if (len <= 0) return fail(Errc::internal, "cannot encode the encrypted key", drain_errors());
  SecureString out = detail::pem_encode("ENCRYPTED PRIVATE KEY",
                                        detail::Bytes(enc, static_cast<std::size_t>(len)));
  OPENSSL_free(enc);
  return out;
}

}  // namespace getcert::pkcs12
