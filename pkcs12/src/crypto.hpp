#pragma once

// The cryptographic primitives PKCS#12 needs, over OpenSSL EVP: algorithm fetching (with the
// legacy provider loaded on demand), the PKCS#12 KDF, PBKDF2, HMAC and CBC/stream decryption.
// Iteration counts reaching here have already been checked against the caller's limit.

#include <cstdint>
#include <optional>
#include <string_view>

#include "ber.hpp"
#include "getcert/pkcs12.hpp"
#include "internal/ossl.hpp"

namespace getcert::pkcs12::detail {

// Fetches a cipher. Legacy ciphers (RC2, RC4, single DES) live in OpenSSL's legacy provider,
// which is loaded into a private library context the first time a file needs it, so the
// host application's default context is left as it configured it. `display` names the
// algorithm in the error when the provider is missing; `legacy_used` is set when it was needed.
Result<internal::EvpCipherPtr> fetch_cipher(std::string_view name, std::string_view display,
                                            bool& legacy_used);

// Fetches a digest (SHA-1/2, MD5) for MACs, PRFs and the PKCS#12 KDF.
Result<internal::EvpMdPtr> fetch_digest(std::string_view name, std::string_view display);

// RFC 7292 appendix B key derivation. `bmp` is the BMPString password (empty = absent).
// id: 1 = key, 2 = IV, 3 = MAC key.
Result<SecureBytes> pkcs12_kdf(const EVP_MD* md, const SecureBytes& bmp, Bytes salt, int id,
                               std::uint64_t iterations, std::size_t length);

// PBKDF2 (RFC 8018) with HMAC over `md`.
Result<SecureBytes> pbkdf2(const EVP_MD* md, const SecureBytes& password, Bytes salt,
                           std::uint64_t iterations, std::size_t length);

// Iterations of key derivation this process has run so far, summed over every pkcs12_kdf() and
// pbkdf2() call (each call's iteration count): how tests tell work that was refused before it
// started from work that ran, by counting rather than by timing.
std::uint64_t derivation_iterations_run() noexcept;

// HMAC over `md`.
Result<std::vector<std::uint8_t>> hmac(const EVP_MD* md, Bytes key, Bytes data);

// Decrypts; a padding failure (the usual sign of a wrong password) is nullopt, not an error.
Result<std::optional<SecureBytes>> decrypt(const EVP_CIPHER* cipher, Bytes key, Bytes iv,
                                           Bytes ciphertext);

// Constant-time comparison.
bool equal_constant_time(Bytes a, Bytes b) noexcept;

}  // namespace getcert::pkcs12::detail
