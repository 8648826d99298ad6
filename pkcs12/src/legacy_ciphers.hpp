#pragma once

// RC2 (RFC 2268) and RC4, decryption only, for the PKCS#12 PBES1 schemes old producers still
// write (pbeWithSHAAnd40BitRC2-CBC is OpenSSL's and Windows' historical default for certificate
// safes). OpenSSL keeps these ciphers in its legacy provider, a module loaded from disk at run
// time; carrying them here means such files decode the same way everywhere: in the static build,
// on systems without the module, and with OPENSSL_MODULES pointing elsewhere. They are never used
// to encrypt.

#include <array>
#include <cstdint>
#include <optional>

#include "ber.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::detail {

// RC2 with an expanded key; `effective_bits` is RFC 2268's T1 (1..1024). The key is 1..128 bytes.
class Rc2 {
 public:
  static constexpr std::size_t kBlockSize = 8;
  Rc2(Bytes key, unsigned effective_bits);
  ~Rc2();
  Rc2(const Rc2&) = delete;
  Rc2& operator=(const Rc2&) = delete;
  Rc2(Rc2&&) = delete;
  Rc2& operator=(Rc2&&) = delete;

  // Decrypts one 8-byte block (`in` and `out` may be the same buffer).
  void decrypt_block(const std::uint8_t* in, std::uint8_t* out) const noexcept;

 private:
  std::array<std::uint16_t, 64> k_{};
};

// The RC4 keystream; apply() XORs it into `data`, so it both encrypts and decrypts.
class Rc4 {
 public:
  explicit Rc4(Bytes key);
  ~Rc4();
  Rc4(const Rc4&) = delete;
  Rc4& operator=(const Rc4&) = delete;
  Rc4(Rc4&&) = delete;
  Rc4& operator=(Rc4&&) = delete;

  void apply(std::uint8_t* data, std::size_t size) noexcept;

 private:
  std::array<std::uint8_t, 256> s_{};
  std::uint8_t i_ = 0;
  std::uint8_t j_ = 0;
};

// RC2-CBC decryption with the PKCS#7 padding check; nullopt when the length is not a multiple of
// the block size or the padding is wrong (the usual sign of a wrong password). The key must be
// 1..128 bytes and the IV 8 bytes.
std::optional<SecureBytes> rc2_cbc_decrypt(Bytes key, unsigned effective_bits, Bytes iv,
                                           Bytes ciphertext);

// RC4 decryption (RC4 has no padding, so there is nothing to check).
SecureBytes rc4_decrypt(Bytes key, Bytes ciphertext);

}  // namespace getcert::pkcs12::detail
