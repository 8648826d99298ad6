// create(): a PFX from a PEM key and its certificates, via PKCS12_create_ex with explicit
// algorithms (OpenSSL's defaults differ between versions and would leave a SHA-1 MAC).

#include <openssl/pem.h>
#include <algorithm>

#include <climits>
#include <cstring>

#include "getcert/pkcs12.hpp"
#include "internal/ossl.hpp"
#include "internal/x509_util.hpp"

namespace getcert::pkcs12 {
namespace {

constexpr std::uint64_t kDefaultIterations = 10'000;
constexpr std::uint64_t kMinimumIterations = 2048;

// Supplies the key passphrase; without one an encrypted key fails instead of OpenSSL's
// default callback prompting on the terminal.
int passphrase_callback(char* buf, int size, int /*rwflag*/, void* user) {
  const auto* pass = static_cast<const Password*>(user);
  if (pass == nullptr || size <= 0) return -1;
  const std::size_t len = std::min(pass->size(), static_cast<std::size_t>(size));
  // OpenSSL takes the length from the return value; buf needs no terminator.
  std::copy_n(pass->data(), len, buf);
  return static_cast<int>(len);
}

}  // namespace

Result<std::vector<std::uint8_t>> create(const Secret& key_pem,
                                         const std::vector<Certificate>& certs,
                                         const CreateOptions& options) {
  const std::uint64_t iterations = options.iterations == 0
                                       ? kDefaultIterations
                                       : std::max(options.iterations, kMinimumIterations);
  if (iterations > INT_MAX) return fail(Errc::invalid_argument, "iteration count too large");
  if (key_pem.empty() && certs.empty()) {
    return fail(Errc::invalid_argument, "nothing to put into the PKCS#12 file");
  }
  internal::clear_errors();

  internal::EvpPkeyPtr key;
  if (!key_pem.empty()) {
    if (key_pem.size() > INT_MAX) return fail(Errc::invalid_argument, "key PEM too large");
    internal::BioPtr bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
    const Password* pass = options.key_passphrase ? &*options.key_passphrase : nullptr;
    key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, passphrase_callback,
                                      const_cast<Password*>(pass)));
    if (!key) {
      // An encrypted key (PKCS#8 or the traditional Proc-Type form) that does not open with the
      // passphrase given is a password problem, as for a .p12; told by the PEM's armour, which
      // OpenSSL's reason codes do not name consistently across key formats.
      const std::string_view pem = key_pem.view();
      const bool encrypted =
          pem.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") != std::string_view::npos ||
          pem.find("Proc-Type: 4,ENCRYPTED") != std::string_view::npos;
      if (encrypted) {
        return fail(Errc::wrong_key_password,
                    pass == nullptr
                        ? "the private key is encrypted and no passphrase was given for it"
                        : "the encrypted private key does not decrypt with the passphrase given",
                    internal::drain_errors());
      }
      return fail(Errc::invalid_argument, "no readable private key in the key PEM",
                  internal::drain_errors());
    }
  }

  internal::X509Ptr leaf;
  internal::X509StackPtr chain(sk_X509_new_null());
  if (!chain) return fail(Errc::internal, "out of memory", internal::drain_errors());
  for (std::size_t i = 0; i < certs.size(); ++i) {
    internal::X509Ptr x = internal::x509_from_certificate(certs[i]);
    if (!x)
      return fail(Errc::invalid_argument,
                  "certificate " + std::to_string(i + 1) + " is not valid DER");
    if (i == 0 && key) {
      leaf = std::move(x);
      continue;
    }
    if (sk_X509_push(chain.get(), x.get()) <= 0) return fail(Errc::internal, "out of memory");
    static_cast<void>(x.release());  // owned by the stack now
  }
  if (leaf && X509_check_private_key(leaf.get(), key.get()) != 1) {
    return fail(Errc::invalid_argument, "the private key does not match the leaf certificate",
                internal::drain_errors());
  }

  // Modern: PBES2 with AES-256-CBC (PBKDF2-HMAC-SHA256 is OpenSSL 3's PRF for it) and a SHA-256
  // MAC. Legacy: what Windows 7/2016, Java 8 and macOS import: 3DES PBE and a SHA-1 MAC.
  const int nid = options.legacy ? NID_pbe_WithSHA1And3_Key_TripleDES_CBC : NID_aes_256_cbc;
  const char* name = options.friendly_name.empty() ? nullptr : options.friendly_name.c_str();
  const int iter = static_cast<int>(iterations);
  internal::Pkcs12Ptr p12(PKCS12_create_ex(options.password.c_str(), name, key.get(), leaf.get(),
                                           sk_X509_num(chain.get()) > 0 ? chain.get() : nullptr,
                                           nid, nid, iter, -1, 0, nullptr, nullptr));
  if (!p12) return fail(Errc::internal, "PKCS#12 creation failed", internal::drain_errors());
  if (PKCS12_set_mac(p12.get(), options.password.c_str(), -1, nullptr, 0, iter,
                     options.legacy ? EVP_sha1() : EVP_sha256()) != 1) {
    return fail(Errc::internal, "PKCS#12 MAC creation failed", internal::drain_errors());
  }
  unsigned char* der = nullptr;
  const int len = i2d_PKCS12(p12.get(), &der);
  const internal::OpensslBytes owned(der);
  if (len <= 0) return fail(Errc::internal, "PKCS#12 encoding failed", internal::drain_errors());
  return std::vector<std::uint8_t>(der, der + len);
}

}  // namespace getcert::pkcs12
