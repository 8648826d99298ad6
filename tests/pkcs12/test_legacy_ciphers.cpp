// The project's own RC2 and RC4 (pkcs12/src/legacy_ciphers.hpp) against the test vectors of their
// RFCs, and RC2-CBC / RC4 against OpenSSL's legacy provider as an oracle where it can be loaded.

#include <openssl/evp.h>
#include <openssl/provider.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "legacy_ciphers.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

using detail::Rc2;
using detail::Rc4;
using Octets = std::vector<std::uint8_t>;

Octets hex(const std::string& text) {
  Octets out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(text.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string to_hex(const std::uint8_t* p, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4U];
    out += kDigits[p[i] & 0xFU];
  }
  return out;
}

// Encrypts with OpenSSL's legacy provider (RC2/RC4 live nowhere else in OpenSSL 3); nullopt when
// the provider cannot be loaded here.
std::optional<Octets> openssl_encrypt(const char* cipher_name, const Octets& key, const Octets& iv,
                                      const Octets& plain) {
  OSSL_LIB_CTX* ctx = OSSL_LIB_CTX_new();
  OSSL_PROVIDER* def = OSSL_PROVIDER_load(ctx, "default");
  OSSL_PROVIDER* legacy = OSSL_PROVIDER_load(ctx, "legacy");
  EVP_CIPHER* cipher = legacy != nullptr ? EVP_CIPHER_fetch(ctx, cipher_name, nullptr) : nullptr;
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  std::optional<Octets> result;
  Octets out(plain.size() + 16);
  int n1 = 0;
  int n2 = 0;
  if (cipher != nullptr && c != nullptr &&
      EVP_EncryptInit_ex2(c, cipher, nullptr, nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_set_key_length(c, static_cast<int>(key.size())) == 1 &&
      EVP_EncryptInit_ex2(c, nullptr, key.data(), iv.empty() ? nullptr : iv.data(), nullptr) == 1 &&
      EVP_EncryptUpdate(c, out.data(), &n1, plain.data(), static_cast<int>(plain.size())) == 1 &&
      EVP_EncryptFinal_ex(c, out.data() + n1, &n2) == 1) {
    out.resize(static_cast<std::size_t>(n1 + n2));
    result = out;
  }
  EVP_CIPHER_CTX_free(c);
  EVP_CIPHER_free(cipher);
  if (legacy != nullptr) OSSL_PROVIDER_unload(legacy);
  if (def != nullptr) OSSL_PROVIDER_unload(def);
  OSSL_LIB_CTX_free(ctx);
  return result;
}

Octets pattern(std::size_t n) {
  Octets out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return out;
}

}  // namespace

TEST_CASE("RC2 decrypts the RFC 2268 section 5 test vectors", "[pkcs12]") {
  struct Vector {
    const char* key;
    unsigned effective_bits;
    const char* plain;
    const char* cipher;
  };
  const std::vector<Vector> vectors{
      {"0000000000000000", 63, "0000000000000000", "ebb773f993278eff"},
      {"ffffffffffffffff", 64, "ffffffffffffffff", "278b27e42e2f0d49"},
      {"3000000000000000", 64, "1000000000000001", "30649edf9be7d2c2"},
      {"88", 64, "0000000000000000", "61a8a244adacccf0"},
      {"88bca90e90875a", 64, "0000000000000000", "6ccf4308974c267f"},
      {"88bca90e90875a7f0f79c384627bafb2", 64, "0000000000000000", "1a807d272bbe5db1"},
      {"88bca90e90875a7f0f79c384627bafb2", 128, "0000000000000000", "2269552ab0f85ca6"},
      {"88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e", 129,
       "0000000000000000", "5b78d3a43dfff1f1"},
  };
  for (const auto& v : vectors) {
    DYNAMIC_SECTION("key " << v.key << ", " << v.effective_bits << " effective bits") {
      const Octets key = hex(v.key);
      const Rc2 rc2(key, v.effective_bits);
      Octets block = hex(v.cipher);
      rc2.decrypt_block(block.data(), block.data());
      CHECK(to_hex(block.data(), block.size()) == v.plain);
    }
  }
}

TEST_CASE("RC4 produces the RFC 6229 keystreams", "[pkcs12]") {
  struct Vector {
    const char* key;
    std::size_t offset;
    const char* stream;
  };
  // RFC 6229 section 2: the keystream at a few offsets for the 40- and 128-bit keys PKCS#12 uses.
  const std::vector<Vector> vectors{
      {"0102030405", 0, "b2396305f03dc027ccc3524a0a1118a8"},
      {"0102030405", 16, "6982944f18fc82d589c403a47a0d0919"},
      {"0102030405", 1520, "3294f744d8f9790507e70f62e5bbceea"},
      {"0102030405", 4096, "ff25b58995996707e51fbdf08b34d875"},
      {"0102030405060708090a0b0c0d0e0f10", 0, "9ac7cc9a609d1ef7b2932899cde41b97"},
      {"0102030405060708090a0b0c0d0e0f10", 16, "5248c4959014126a6e8a84f11d1a9e1c"},
      {"0102030405060708090a0b0c0d0e0f10", 1520, "b40110c4190b5622a96116b0017ed297"},
      {"0102030405060708090a0b0c0d0e0f10", 4096, "a36a4c301ae8ac13610ccbc12256cacc"},
  };
  for (const auto& v : vectors) {
    DYNAMIC_SECTION("key " << v.key << " at offset " << v.offset) {
      Octets zeros(v.offset + 16);
      Rc4 rc4(hex(v.key));
      rc4.apply(zeros.data(), zeros.size());
      CHECK(to_hex(zeros.data() + v.offset, 16) == v.stream);
      // Applying it in pieces gives the same stream as in one call.
      Octets pieces(v.offset + 16);
      Rc4 again(hex(v.key));
      again.apply(pieces.data(), 7);
      again.apply(pieces.data() + 7, pieces.size() - 7);
      CHECK(pieces == zeros);
    }
  }
}

TEST_CASE("RC2-CBC rejects ciphertexts whose padding or length is wrong", "[pkcs12]") {
  const Octets key = hex("0102030405");
  const Octets iv = hex("0001020304050607");
  CHECK_FALSE(detail::rc2_cbc_decrypt(key, 40, iv, Octets{}).has_value());
  CHECK_FALSE(detail::rc2_cbc_decrypt(key, 40, iv, Octets(12)).has_value());
  // A block that decrypts to random-looking bytes almost never ends in valid padding; find one
  // that does not by decrypting blocks of a fixed pattern.
  int rejected = 0;
  for (std::uint8_t b = 0; b < 16; ++b) {
    const Octets block(8, b);
    if (!detail::rc2_cbc_decrypt(key, 40, iv, block)) ++rejected;
  }
  CHECK(rejected >= 12);
}

TEST_CASE("RC2-CBC and RC4 decrypt what OpenSSL's legacy provider encrypts", "[pkcs12]") {
  for (const std::size_t size : {0U, 1U, 7U, 8U, 9U, 64U, 1000U}) {
    const Octets plain = pattern(size);
    DYNAMIC_SECTION("RC2-40-CBC, " << size << " bytes") {
      const Octets key = hex("a1b2c3d4e5");
      const Octets iv = hex("1122334455667788");
      const auto encrypted = openssl_encrypt("RC2-40-CBC", key, iv, plain);
      if (!encrypted) GETCERT_SKIP("OpenSSL's legacy provider cannot be loaded here");
      const auto decrypted = detail::rc2_cbc_decrypt(key, 40, iv, *encrypted);
      REQUIRE(decrypted.has_value());
      CHECK(Octets(decrypted->begin(), decrypted->end()) == plain);
    }
    DYNAMIC_SECTION("RC2-128-CBC, " << size << " bytes") {
      const Octets key = hex("00112233445566778899aabbccddeeff");
      const Octets iv = hex("8877665544332211");
      const auto encrypted = openssl_encrypt("RC2-CBC", key, iv, plain);
      if (!encrypted) GETCERT_SKIP("OpenSSL's legacy provider cannot be loaded here");
      const auto decrypted = detail::rc2_cbc_decrypt(key, 128, iv, *encrypted);
      REQUIRE(decrypted.has_value());
      CHECK(Octets(decrypted->begin(), decrypted->end()) == plain);
    }
    DYNAMIC_SECTION("RC4-40, " << size << " bytes") {
      const Octets key = hex("a1b2c3d4e5");
      const auto encrypted = openssl_encrypt("RC4-40", key, {}, plain);
      if (!encrypted) GETCERT_SKIP("OpenSSL's legacy provider cannot be loaded here");
      const auto decrypted = detail::rc4_decrypt(key, *encrypted);
      CHECK(Octets(decrypted.begin(), decrypted.end()) == plain);
    }
  }
}

}  // namespace getcert::pkcs12::test
