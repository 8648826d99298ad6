// create(): modern and legacy files that our decoder, `openssl pkcs12` and keytool all open.

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "getcert/pkcs12.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

std::vector<Certificate> load_chain(const TestLeaf& leaf, const TestPki& pki) {
  std::vector<Certificate> out;
  for (const auto& p : {leaf.cert, pki.inter_cert, pki.root_cert}) {
    auto certs = parse_certificates_pem(read_file(p));
    REQUIRE(certs.has_value());
    out.push_back(certs->at(0));
  }
  return out;
}

// Callers check for keytool before their first SECTION (REQUIRE_TOOL): a skip in here would sit
// inside a SECTION (tests/support/skip.hpp).
void check_keytool(const fs::path& p12, const std::string& password) {
  const auto r = run({"keytool", "-list", "-storetype", "pkcs12", "-keystore", p12.string(),
                      "-storepass", password},
                     kJavaLimit);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("PrivateKeyEntry") != std::string::npos);
}

struct Created {
  std::vector<std::uint8_t> p12;
  Bundle decoded;
};

// create() for `leaf` with `certs` and `options` at 2048 iterations, then decode() of the file
// with the same password: both must succeed.
Created create_and_decode(const TestLeaf& leaf, const std::vector<Certificate>& certs,
                          CreateOptions options) {
  options.iterations = 2048;
  auto p12 = create(read_file(leaf.key), certs, options);
  REQUIRE(p12.has_value());
  auto decoded = decode(*p12, DecodeOptions{options.password});
  REQUIRE(decoded.has_value());
  return {std::move(*p12), std::move(*decoded)};
}

}  // namespace

TEST_CASE("create: modern defaults round-trip through decode, openssl and keytool", "[pkcs12]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const TestPki& pki = test_pki();
  TempDir tmp;
  for (const auto& leaf : pki.leaves) {
    DYNAMIC_SECTION(leaf.name) {
      const auto certs = load_chain(leaf, pki);
      CreateOptions options;
      options.password = "create-pass";
      options.friendly_name = "my key \xE2\x98\xBA";
      const auto [p12, decoded] = create_and_decode(leaf, certs, options);
      REQUIRE(decoded.identities.size() == 1);
      const auto& id = decoded.identities[0];
      REQUIRE(id.leaf.has_value());
      CHECK(id.leaf->der == certs[0].der);
      REQUIRE(id.chain.size() == 2);
      CHECK(id.chain[0].der == certs[1].der);
      CHECK(id.chain[1].der == certs[2].der);
      CHECK(decoded.extra_certs.empty());
      CHECK(id.key.attributes().friendly_name == options.friendly_name);
      CHECK(id.leaf_attributes.friendly_name == options.friendly_name);
      CHECK_FALSE(id.key.attributes().local_key_id.empty());
      CHECK(id.key.attributes().local_key_id == id.leaf_attributes.local_key_id);
      const auto& info = decoded.info;
      CHECK(info.mac.algorithm == "SHA-256");
      CHECK(info.mac.iterations == 2048);
      // Counted, so that a file with no encrypted safe or no shrouded key fails instead of
      // skipping the checks on their algorithms.
      std::size_t encrypted_safes = 0;
      std::size_t shrouded_keys = 0;
      for (const auto& safe : info.safes) {
        if (safe.content_type == "encryptedData") {
          ++encrypted_safes;
          CHECK(safe.encryption == "PBES2/PBKDF2-HMAC-SHA256/AES-256-CBC");
        }
        for (const auto& bag : safe.bags) {
          if (bag.type == "pkcs8ShroudedKeyBag") {
            ++shrouded_keys;
            CHECK(bag.encryption == "PBES2/PBKDF2-HMAC-SHA256/AES-256-CBC");
          }
        }
      }
      CHECK(encrypted_safes >= 1);
      CHECK(shrouded_keys == 1);
      CHECK_FALSE(info.legacy_provider_used);

      const fs::path file = tmp / ("modern-" + leaf.name + ".p12");
      write_file(file, p12);
      // No -legacy: a modern file must open with OpenSSL 3 defaults.
      const auto oracle = openssl_extract(file, std::string(options.password.view()), {});
      INFO(oracle.error);
      REQUIRE(oracle.ok);
      REQUIRE(oracle.keys.size() == 1);
      CHECK(oracle.keys[0] == normalized_key_der(read_file(leaf.key)));
      CHECK(oracle.certs.size() == 3);
      check_keytool(file, std::string(options.password.view()));
    }
  }
}

TEST_CASE("create: legacy mode uses 3DES and a SHA-1 MAC", "[pkcs12]") {
  REQUIRE_TOOL(have_tool("keytool"), "keytool (openjdk)");
  const TestPki& pki = test_pki();
  const auto& leaf = pki.leaves.at(0);  // RSA: what old Windows/Java/macOS expect
  const auto certs = load_chain(leaf, pki);
  CreateOptions options;
  options.password = "legacy-pass";
  options.legacy = true;
  options.friendly_name = "legacy";
  const auto [p12, decoded] = create_and_decode(leaf, certs, options);
  CHECK(decoded.info.mac.algorithm == "SHA-1");
  std::size_t encrypted_safes = 0;
  std::size_t shrouded_keys = 0;
  for (const auto& safe : decoded.info.safes) {
    if (safe.content_type == "encryptedData") {
      ++encrypted_safes;
      CHECK(safe.encryption == "pbeWithSHA1And3-KeyTripleDES-CBC");
    }
    for (const auto& bag : safe.bags) {
      if (bag.type == "pkcs8ShroudedKeyBag") {
        ++shrouded_keys;
        CHECK(bag.encryption == "pbeWithSHA1And3-KeyTripleDES-CBC");
      }
    }
  }
  CHECK(encrypted_safes >= 1);
  CHECK(shrouded_keys == 1);
  TempDir tmp;
  write_file(tmp / "legacy.p12", p12);
  const auto oracle = openssl_extract(tmp / "legacy.p12", std::string(options.password.view()), {});
  REQUIRE(oracle.ok);
  CHECK(oracle.keys.at(0) == normalized_key_der(read_file(leaf.key)));
  check_keytool(tmp / "legacy.p12", std::string(options.password.view()));
}

TEST_CASE("create: empty password, non-ASCII password, certs only, encrypted key input",
          "[pkcs12]") {
  const TestPki& pki = test_pki();
  const auto& leaf = pki.leaves.at(1);
  const auto certs = load_chain(leaf, pki);
  TempDir tmp;
  SECTION("empty password") {
    CreateOptions options;
    options.iterations = 2048;
    const auto p12 = create(read_file(leaf.key), certs, options);
    REQUIRE(p12.has_value());
    const auto decoded = decode(*p12);
    REQUIRE(decoded.has_value());
    CHECK(decoded->info.password_used == PasswordKind::empty);
    write_file(tmp / "empty.p12", *p12);
    CHECK(openssl_extract(tmp / "empty.p12", "", {}).ok);
  }
  SECTION("non-ASCII password") {
    CreateOptions options;
    options.password = "p\xC3\xA4ss \xE2\x98\xBA \xF0\x9F\x98\x80";
    options.iterations = 2048;
    const auto p12 = create(read_file(leaf.key), certs, options);
    REQUIRE(p12.has_value());
    CHECK(decode(*p12, DecodeOptions{options.password}).has_value());
    write_file(tmp / "utf8.p12", *p12);
    CHECK(openssl_extract(tmp / "utf8.p12", std::string(options.password.view()), {}).ok);
  }
  SECTION("certificates only: a trust store") {
    CreateOptions options;
    options.password = "trust";
    options.iterations = 2048;
    const auto p12 = create("", {certs[2], certs[1]}, options);
    REQUIRE(p12.has_value());
    const auto decoded = decode(*p12, DecodeOptions{options.password});
    REQUIRE(decoded.has_value());
    CHECK(decoded->identities.empty());
    CHECK(decoded->extra_certs.size() == 2);
  }
  SECTION("encrypted key input needs its passphrase") {
    const auto enc =
        run({"openssl", "pkey", "-in", leaf.key.string(), "-aes256", "-passout", "pass:keypass"});
    REQUIRE(enc.exit_code == 0);
    CreateOptions options;
    options.password = "x";
    options.iterations = 2048;
    const auto without = create(enc.out, certs, options);
    REQUIRE_FALSE(without.has_value());
    CHECK(without.error().code == Errc::wrong_key_password);
    options.key_passphrase = "not the passphrase";
    const auto wrong = create(enc.out, certs, options);
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().code == Errc::wrong_key_password);
    options.key_passphrase = "keypass";
    CHECK(create(enc.out, certs, options).has_value());
  }
  SECTION("a key that does not match the leaf is refused") {
    CreateOptions options;
    options.password = "x";
    const auto p12 = create(read_file(pki.leaves.at(0).key), certs, options);
    REQUIRE_FALSE(p12.has_value());
    CHECK(p12.error().code == Errc::invalid_argument);
  }
}

}  // namespace getcert::pkcs12::test
