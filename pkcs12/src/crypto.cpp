#include "crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>

#include <atomic>
#include <climits>
#include <mutex>
#include <string>

#include "internal/owners.hpp"

namespace getcert::pkcs12::detail {
namespace {

// The private library context holding the default and legacy providers. It is created once and
// deliberately never freed: ciphers fetched from it may still be referenced by other threads,
// and freeing it from a static destructor races OpenSSL's own atexit cleanup.
OSSL_LIB_CTX* legacy_context() {
  static std::mutex mutex;
  static OSSL_LIB_CTX* ctx = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (ctx != nullptr) return ctx;
  internal::OsslLibCtxPtr fresh(OSSL_LIB_CTX_new());
  if (!fresh) return nullptr;
  // Declared after `fresh` so that on failure they are unloaded before the context is freed.
  internal::OsslProviderPtr default_provider(OSSL_PROVIDER_load(fresh.get(), "default"));
  internal::OsslProviderPtr legacy_provider(OSSL_PROVIDER_load(fresh.get(), "legacy"));
  if (!default_provider || !legacy_provider) {
    return nullptr;  // not cached: OPENSSL_MODULES may be fixed before the next file
  }
  static_cast<void>(default_provider.release());
  static_cast<void>(legacy_provider.release());
  ctx = fresh.release();
  return ctx;
}

int to_int(std::size_t v) { return v > INT_MAX ? INT_MAX : static_cast<int>(v); }

}  // namespace

Result<internal::EvpCipherPtr> fetch_cipher(std::string_view name, std::string_view display,
                                            bool& legacy_used) {
  const std::string n(name);
  internal::clear_errors();
  if (internal::EvpCipherPtr c(EVP_CIPHER_fetch(nullptr, n.c_str(), nullptr)); c) return c;
  internal::clear_errors();
  OSSL_LIB_CTX* legacy = legacy_context();
  if (legacy == nullptr) {
    return fail(Errc::unsupported,
                "this file uses " + std::string(display) +
                    " (legacy algorithm); OpenSSL's legacy provider could not be loaded: install "
                    "libssl3 / set OPENSSL_MODULES",
                internal::drain_errors());
  }
  internal::EvpCipherPtr c(EVP_CIPHER_fetch(legacy, n.c_str(), nullptr));
  if (!c) {
    return fail(Errc::unsupported, "OpenSSL does not provide " + std::string(display),
                internal::drain_errors());
  }
  legacy_used = true;
  return c;
}

Result<internal::EvpMdPtr> fetch_digest(std::string_view name, std::string_view display) {
  const std::string n(name);
  internal::clear_errors();
  internal::EvpMdPtr md(EVP_MD_fetch(nullptr, n.c_str(), nullptr));
  if (!md) {
    return fail(Errc::unsupported, "OpenSSL does not provide the digest " + std::string(display),
                internal::drain_errors());
  }
  return md;
}

namespace {

std::atomic<std::uint64_t> iterations_run{0};

}  // namespace

std::uint64_t derivation_iterations_run() noexcept { return iterations_run.load(); }

Result<SecureBytes> pkcs12_kdf(const EVP_MD* md, const SecureBytes& bmp, Bytes salt, int id,
                               std::uint64_t iterations, std::size_t length) {
  iterations_run.fetch_add(iterations);
  SecureBytes out(length);
  // OpenSSL wants non-null buffers even for a zero-length (absent) password.
  unsigned char none = 0;
  unsigned char* pass = bmp.empty() ? &none : const_cast<unsigned char*>(bmp.data());
  unsigned char* salt_ptr = salt.empty() ? &none : const_cast<unsigned char*>(salt.data());
  internal::clear_errors();
  if (iterations == 0 || iterations > INT_MAX ||
      PKCS12_key_gen_uni(pass, to_int(bmp.size()), salt_ptr, to_int(salt.size()), id,
                         static_cast<int>(iterations), to_int(length), out.data(), md) != 1) {
    return fail(Errc::internal, "PKCS#12 key derivation failed", internal::drain_errors());
  }
  return out;
}

Result<SecureBytes> pbkdf2(const EVP_MD* md, const SecureBytes& password, Bytes salt,
                           std::uint64_t iterations, std::size_t length) {
  iterations_run.fetch_add(iterations);
  SecureBytes out(length);
  const char none = 0;
  const char* pass = password.empty() ? &none : reinterpret_cast<const char*>(password.data());
  const unsigned char zero = 0;
  internal::clear_errors();
  if (iterations == 0 || iterations > INT_MAX ||
      PKCS5_PBKDF2_HMAC(pass, to_int(password.size()), salt.empty() ? &zero : salt.data(),
                        to_int(salt.size()), static_cast<int>(iterations), md, to_int(length),
                        out.data()) != 1) {
    return fail(Errc::internal, "PBKDF2 key derivation failed", internal::drain_errors());
  }
  return out;
}

Result<std::vector<std::uint8_t>> hmac(const EVP_MD* md, Bytes key, Bytes data) {
  std::vector<std::uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  const unsigned char zero = 0;
  internal::clear_errors();
  if (HMAC(md, key.empty() ? &zero : key.data(), to_int(key.size()),
           data.empty() ? &zero : data.data(), data.size(), out.data(), &len) == nullptr) {
    return fail(Errc::internal, "HMAC computation failed", internal::drain_errors());
  }
  out.resize(len);
  return out;
}

Result<std::optional<SecureBytes>> decrypt(const EVP_CIPHER* cipher, Bytes key, Bytes iv,
                                           Bytes ciphertext) {
  internal::clear_errors();
  internal::EvpCipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_DecryptInit_ex2(ctx.get(), cipher, nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_set_key_length(ctx.get(), to_int(key.size())) != 1 ||
      EVP_DecryptInit_ex2(ctx.get(), nullptr, key.data(), iv.empty() ? nullptr : iv.data(),
                          nullptr) != 1) {
    return fail(Errc::internal, "cipher setup failed", internal::drain_errors());
  }
  const int block = EVP_CIPHER_CTX_get_block_size(ctx.get());
  if (block > 1 && ciphertext.size() % static_cast<std::size_t>(block) != 0) {
    return std::optional<SecureBytes>{};  // cannot be a CBC ciphertext of this cipher
  }
  SecureBytes out(ciphertext.size() + static_cast<std::size_t>(block) + 1);
  int len1 = 0;
  int len2 = 0;
  const unsigned char zero = 0;
  if (EVP_DecryptUpdate(ctx.get(), out.data(), &len1,
                        ciphertext.empty() ? &zero : ciphertext.data(),
                        to_int(ciphertext.size())) != 1) {
    return fail(Errc::internal, "decryption failed", internal::drain_errors());
  }
  if (EVP_DecryptFinal_ex(ctx.get(), out.data() + len1, &len2) != 1) {
    internal::clear_errors();
    return std::optional<SecureBytes>{};
  }
  out.resize(static_cast<std::size_t>(len1) + static_cast<std::size_t>(len2));
  return std::optional<SecureBytes>{std::move(out)};
}

bool equal_constant_time(Bytes a, Bytes b) noexcept {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace getcert::pkcs12::detail
