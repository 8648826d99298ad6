// PrivateKey output: plain PKCS#8 PEM and encrypted PKCS#8 (PBES2, PBKDF2-SHA256, AES-256-CBC).

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::test {

TEST_CASE("private keys come out as PKCS#8 PEM, plain or encrypted", "[pkcs12]") {
  const TestPki& pki = test_pki();
  for (const auto& leaf : pki.leaves) {
    DYNAMIC_SECTION(leaf.name) {
      CreateOptions options;
      options.password = "pw";
      options.iterations = 2048;
      const auto p12 = create(read_file(leaf.key), {}, options);
      REQUIRE(p12.has_value());
      const auto decoded = decode(*p12, DecodeOptions{std::string("pw")});
      REQUIRE(decoded.has_value());
      REQUIRE(decoded->identities.size() == 1);
      const PrivateKey& key = decoded->identities[0].key;
      CHECK(key.info().type == (leaf.name == "rsa"     ? "RSA"
                                : leaf.name == "ecdsa" ? "EC"
                                                       : "Ed25519"));

      const auto pem = key.pem();
      const std::string pem_text(pem.begin(), pem.end());
      CHECK(pem_text.rfind("-----BEGIN PRIVATE KEY-----\n", 0) == 0);
      const auto original = normalized_key_der(read_file(leaf.key));
      REQUIRE_FALSE(original.empty());
      CHECK(normalized_key_der(pem_text) == original);

      const auto encrypted = key.encrypted_pem("key pass \xE2\x98\xBA", 2048);
      REQUIRE(encrypted.has_value());
      const std::string enc_text(encrypted->begin(), encrypted->end());
      CHECK(enc_text.rfind("-----BEGIN ENCRYPTED PRIVATE KEY-----\n", 0) == 0);
      CHECK(normalized_key_der(enc_text, "key pass \xE2\x98\xBA") == original);
      CHECK(normalized_key_der(enc_text, "wrong").empty());

      TempDir tmp;
      write_file(tmp / "enc.pem", enc_text);
      const auto parsed = run({"openssl", "asn1parse", "-in", tmp / "enc.pem"});
      REQUIRE(parsed.exit_code == 0);
      CHECK(parsed.out.find("PBES2") != std::string::npos);
      CHECK(parsed.out.find("hmacWithSHA256") != std::string::npos);
      CHECK(parsed.out.find("aes-256-cbc") != std::string::npos);
    }
  }
}

TEST_CASE("encrypted_pem refuses an empty passphrase and tiny iteration counts", "[pkcs12]") {
  const TestPki& pki = test_pki();
  CreateOptions options;
  options.password = "pw";
  const auto p12 = create(read_file(pki.leaves.at(1).key), {}, options);
  REQUIRE(p12.has_value());
  const auto decoded = decode(*p12, DecodeOptions{std::string("pw")});
  REQUIRE(decoded.has_value());
  const PrivateKey& key = decoded->identities.at(0).key;
  const auto empty = key.encrypted_pem("");
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().code == Errc::invalid_argument);
  const auto weak = key.encrypted_pem("pass", 10);
  REQUIRE_FALSE(weak.has_value());
  CHECK(weak.error().code == Errc::invalid_argument);
}

}  // namespace getcert::pkcs12::test
