// decode() against the public third-party vectors (tests/vectors/pkcs12), with
// `openssl pkcs12` as the oracle where OpenSSL 3.0 can read a file.

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <set>

#include "ber.hpp"
#include "fixtures.hpp"
#include "getcert/pkcs12.hpp"
#include "support/skip.hpp"

namespace getcert::pkcs12::test {
namespace {

Result<Bundle> decode_file(const fs::path& path, const std::optional<std::string>& password) {
  DecodeOptions options;
  options.password = password;
  return decode(read_bytes(path), options);
}

// Every certificate in the bundle once: leaves, chains, extras.
std::vector<Certificate> all_certs(const Bundle& b) {
  std::vector<Certificate> out;
  std::set<std::string> seen;
  auto add = [&](const Certificate& c) {
    if (seen.insert(c.sha256).second) out.push_back(c);
  };
  for (const auto& id : b.identities) {
    if (id.leaf) add(*id.leaf);
    for (const auto& c : id.chain) add(c);
  }
  for (const auto& c : b.extra_certs) add(c);
  return out;
}

std::optional<int> count_in(const std::string& text, const std::string& noun) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex("(\\d+) " + noun + "s?\\b"))) return std::stoi(m[1]);
  return std::nullopt;
}

// Expected error codes of the NEGATIVE rows.
const std::map<std::string, Errc>& expected_failures() {
  static const std::map<std::string, Errc> m{
      {"go-pbmac1-short-key-bypass.p12", Errc::malformed_input},
      {"rfc9579-a4.p12", Errc::wrong_password},
      {"rfc9579-a6.p12", Errc::malformed_input},
      {"openssl-bad1.p12", Errc::malformed_input},
      {"openssl-bad3.p12", Errc::malformed_input},
      {"botan-pfx_version_2.pfx", Errc::malformed_input},
      {"botan-nesting_too_deep.pfx", Errc::malformed_input},
      {"bc-gostPfx.p12", Errc::unsupported},
  };
  return m;
}

// The password bytes OpenSSL needs: bc-with-key-entry was keyed with ISO-8859-1 bytes.
std::string openssl_password(const VectorRow& row) {
  if (row.file == "bc-with-key-entry.p12")
    return "M\xF6tley Cr\xFC"
           "e";
  return row.password.value_or("");
}

bool is_pbmac1(const VectorRow& row) {
  return row.file.rfind("rfc9579", 0) == 0 || row.file.find("pbmac1") != std::string::npos;
}

}  // namespace

TEST_CASE("every public vector decodes, or is rejected as the manifest says", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  const auto rows = load_manifest(dir);
  REQUIRE(rows.size() >= 40);
  for (const auto& row : rows) {
    DYNAMIC_SECTION(row.file) {
      const auto result = decode_file(dir / row.file, row.password);
      if (row.negative) {
        REQUIRE_FALSE(result.has_value());
        const auto it = expected_failures().find(row.file);
        REQUIRE(it != expected_failures().end());
        CHECK(to_string(result.error().code) == to_string(it->second));
        CHECK_FALSE(result.error().message.empty());
        continue;
      }
      INFO(row.file << ": " << (result ? std::string("ok") : result.error().message));
      REQUIRE(result.has_value());
      const auto keys = count_in(row.contents, "key");
      const auto certs = count_in(row.contents, "cert");
      if (keys) CHECK(result->identities.size() == static_cast<std::size_t>(*keys));
      if (certs && row.file != "bc-gostPfx.p12") {
        CHECK(all_certs(*result).size() == static_cast<std::size_t>(*certs));
      }
      CHECK(result->info.version == 3);
    }
  }
}

TEST_CASE("keys and certificates equal what openssl pkcs12 -legacy -nodes extracts", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  if (!have_tool("openssl")) {
    GETCERT_SKIP("openssl not installed");
  }
  int compared = 0;
  for (const auto& row : load_manifest(dir)) {
    if (row.negative) continue;
    std::vector<std::string> flags{"-legacy"};
    if (is_pbmac1(row)) flags.push_back("-nomacver");
    const auto oracle = openssl_extract(dir / row.file, openssl_password(row), flags);
    if (!oracle.ok) {
      // botan-unknown_bag_secret: OpenSSL rejects the whole file; covered by the test above.
      UNSCOPED_INFO(row.file << ": openssl cannot read it, not compared");
      continue;
    }
    {
      INFO(row.file);
      const auto result = decode_file(dir / row.file, row.password);
      REQUIRE(result.has_value());
      std::multiset<std::string> ours_certs;
      std::multiset<std::string> theirs_certs;
      for (const auto& c : all_certs(*result)) ours_certs.insert(to_hex(c.der));
      for (const auto& c : oracle.certs) theirs_certs.insert(to_hex(c));
      CHECK(ours_certs == theirs_certs);
      std::multiset<std::string> ours_keys;
      std::multiset<std::string> theirs_keys;
      for (const auto& id : result->identities) {
        const auto pem = id.key.pem();
        ours_keys.insert(to_hex(normalized_key_der(std::string(pem.begin(), pem.end()))));
      }
      for (const auto& k : oracle.keys) theirs_keys.insert(to_hex(k));
      CHECK(ours_keys == theirs_keys);
      ++compared;
    }
  }
  CHECK(compared >= 25);
}

TEST_CASE("the empty and the absent password are both tried and reported", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  const std::vector<std::pair<std::string, PasswordKind>> cases{
      {"pyca-no-password.p12", PasswordKind::absent},
      {"go-windows-azure-tools.p12", PasswordKind::absent},
      {"bc-repeatedLocalKeyIdPfx.p12", PasswordKind::absent},
      {"go-testing-example-com.p12", PasswordKind::empty},
      {"pyca-java-truststore.p12", PasswordKind::empty},
      {"bc-sample_cacerts.p12", PasswordKind::unused},
  };
  for (const auto& [file, kind] : cases) {
    DYNAMIC_SECTION(file) {
      for (const auto& password : {std::optional<std::string>{}, std::optional<std::string>{""}}) {
        const auto result = decode_file(dir / file, password);
        REQUIRE(result.has_value());
        CHECK(to_string(result->info.password_used) == to_string(kind));
      }
      const auto wrong = decode_file(dir / file, std::string("not-the-password"));
      if (kind != PasswordKind::unused) {
        REQUIRE_FALSE(wrong.has_value());
        CHECK(wrong.error().code == Errc::wrong_password);
        CHECK(wrong.error().message == "wrong password (MAC check failed)");
      }
    }
  }
}

TEST_CASE("a wrong password is wrong_password and never leaks into the message", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  const std::string secret = "hunter2-secret";
  for (const char* file : {"pyca-cert-key-aes256cbc.p12", "rfc9579-a1.p12", "bc-certUTF.p12"}) {
    const auto result = decode_file(dir / file, secret);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::wrong_password);
    CHECK(result.error().message.find(secret) == std::string::npos);
    CHECK(result.error().detail.find(secret) == std::string::npos);
  }
}

TEST_CASE("a UTF-8 password is retried as ISO-8859-1 (JSafe file)", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  const auto result =
      decode_file(dir / "bc-with-key-entry.p12", std::string("M\xC3\xB6tley Cr\xC3\xBC"
                                                             "e"));
  REQUIRE(result.has_value());
  REQUIRE(result->identities.size() == 1);
  CHECK(result->identities[0].leaf.has_value());
  CHECK(result->info.password_used == PasswordKind::given);
  const auto& w = result->info.warnings;
  CHECK(std::any_of(w.begin(), w.end(), [](const std::string& s) {
    return s.find("ISO-8859-1") != std::string::npos;
  }));
  // The Greek password of shibboleth.pfx is proper UTF-16 in the KDF.
  CHECK(decode_file(dir / "openssl-shibboleth.pfx",
                    std::string("\xCF\x83\xCF\x8D\xCE\xBD\xCE\xB8\xCE\xB7\xCE\xBC\xCE\xB1 "
                                "\xCE\xB3\xCE\xBD\xCF\x8E\xCF\x81\xCE\xB9\xCF\x83\xCE\xBC\xCE\xB1"))
            .has_value());
}

TEST_CASE("attributes: friendlyName (BMPString, non-ASCII), localKeyId, Microsoft, Oracle",
          "[pkcs12]") {
  const fs::path dir = vectors_dir();
  SECTION("non-ASCII friendly names") {
    const auto r = decode_file(dir / "pyca-name-unicode-pwd.p12", std::string("password"));
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    CHECK(r->identities[0].key.attributes().friendly_name == "\xE2\x98\xBA");  // U+263A
    CHECK(r->identities[0].leaf_attributes.friendly_name == "\xE2\x98\xBA");
    CHECK(r->identities[0].key.attributes().local_key_id ==
          "2534F63C8F948CE54827F670D924D5FC81FAA12C");
    REQUIRE(r->extra_cert_attributes.size() == 2);
    CHECK(r->extra_cert_attributes[0].friendly_name == "\xC3\xA4");  // U+00E4
    CHECK(r->extra_cert_attributes[1].friendly_name == "\xC3\xA7");  // U+00E7
  }
  SECTION("Windows CSP name, trailing U+0000 dropped") {
    const auto r = decode_file(dir / "go-windows-azure-tools.p12", std::nullopt);
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    const auto& key_attrs = r->identities[0].key.attributes();
    CHECK(key_attrs.friendly_name == "{B4A4FEB0-A18A-44BB-B5F2-491EF152BA16}");
    const auto csp =
        std::find_if(key_attrs.all.begin(), key_attrs.all.end(),
                     [](const Attribute& a) { return a.oid == "1.3.6.1.4.1.311.17.1"; });
    REQUIRE(csp != key_attrs.all.end());
    CHECK(csp->name == "msCspName");
    CHECK(csp->value == "Microsoft Software Key Storage Provider");
    CHECK(r->identities[0].leaf_attributes.friendly_name ==
          "Paul's Playground-10-2-2014-credentials");
  }
  SECTION("other Microsoft OIDs are named and kept") {
    const auto r = decode_file(dir / "bc-pkcs12StorageIssue.p12", std::string("pass"));
    REQUIRE(r.has_value());
    const auto& all = r->identities.at(0).key.attributes().all;
    CHECK(std::any_of(all.begin(), all.end(), [](const Attribute& a) {
      return a.oid == "1.3.6.1.4.1.311.17.2" && !a.name.empty();
    }));
  }
  SECTION("Java trusted key usage in a trust store") {
    const auto r = decode_file(dir / "pyca-java-truststore.p12", std::nullopt);
    REQUIRE(r.has_value());
    CHECK(r->identities.empty());
    REQUIRE(r->extra_certs.size() == 2);
    const auto& all = r->extra_cert_attributes[0].all;
    const auto it = std::find_if(all.begin(), all.end(), [](const Attribute& a) {
      return a.oid == "2.16.840.1.113894.746875.1.1";
    });
    REQUIRE(it != all.end());
    CHECK(it->value.find("2.5.29.37.0") != std::string::npos);
    CHECK(r->extra_cert_attributes[0].friendly_name == "cert1");
  }
  SECTION("a certificate with two localKeyIds") {
    const auto r = decode_file(dir / "bc-repeatedLocalKeyIdPfx.p12", std::nullopt);
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    CHECK(r->identities[0].leaf.has_value());
    const auto& all = r->identities[0].leaf_attributes.all;
    CHECK(std::count_if(all.begin(), all.end(),
                        [](const Attribute& a) { return a.name == "localKeyId"; }) == 2);
  }
}

TEST_CASE("chains are ordered leaf -> root whatever the file order", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  SECTION("cmp-signer: four certificates, matches the companion files") {
    const auto r = decode_file(dir / "openssl-cmp-signer.p12", std::string("12345"));
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    const auto& id = r->identities[0];
    auto companions = parse_certificates_pem(read_file(dir / "openssl-cmp-signer.crt"));
    auto root = parse_certificates_pem(read_file(dir / "openssl-cmp-signer_root.crt"));
    REQUIRE(companions.has_value());
    REQUIRE(root.has_value());
    REQUIRE(companions->size() == 3);
    REQUIRE(id.leaf.has_value());
    CHECK(id.leaf->der == (*companions)[0].der);
    REQUIRE(id.chain.size() == 3);
    CHECK(id.chain[0].der == (*companions)[1].der);
    CHECK(id.chain[1].der == (*companions)[2].der);
    CHECK(id.chain[2].der == (*root)[0].der);
    CHECK(r->extra_certs.empty());
    const auto pem = id.key.pem();
    CHECK(normalized_key_der(std::string(pem.begin(), pem.end())) ==
          normalized_key_der(read_file(dir / "openssl-cmp-signer.key")));
  }
  SECTION("test-BER: file order leaf, root, issuing CA") {
    const auto r = decode_file(dir / "openssl-test-BER.p12", std::string("12345"));
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    const auto& id = r->identities[0];
    REQUIRE(id.leaf.has_value());
    CHECK(id.leaf->subject_cn == "Docker_Playground_TLS");
    REQUIRE(id.chain.size() == 2);
    CHECK(id.chain[0].subject_cn == "TLS_ISSUING_CA");
    CHECK(id.chain[1].subject_cn == "TLS_ROOTCA");
  }
  SECTION("davidhook BER: end-entity last, key safe first") {
    const auto r = decode_file(dir / "bc-pkcs12-ber-davidhook.p12", std::string("hello world"));
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    const auto& id = r->identities[0];
    REQUIRE(id.leaf.has_value());
    CHECK(id.leaf->subject.find("dgh@wumpus.com.au") != std::string::npos);
    REQUIRE(id.chain.size() == 2);
    // The root's MD2 signature cannot be checked; it is still chained by name.
    CHECK(id.chain[1].subject.find("Class 1 Public Primary") != std::string::npos);
    CHECK_FALSE(r->info.legacy_provider_used);  // RC2-40 is built in
  }
  SECTION("pyca: unrelated certificates are extra certs, the key matches its companion") {
    const auto r = decode_file(dir / "pyca-name-all-pwd.p12", std::string("password"));
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    auto ca = parse_certificates_pem(read_file(dir / "pyca-ca.pem"));
    REQUIRE(ca.has_value());
    REQUIRE(r->identities[0].leaf.has_value());
    CHECK(r->identities[0].leaf->der == (*ca)[0].der);
    CHECK(r->identities[0].chain.empty());
    CHECK(r->extra_certs.size() == 2);
    const auto pem = r->identities[0].key.pem();
    CHECK(normalized_key_der(std::string(pem.begin(), pem.end())) ==
          normalized_key_der(read_file(dir / "pyca-ca_key.pem")));
  }
  SECTION("a key without certificate is still returned") {
    const auto r = decode_file(dir / "pyca-no-cert-key-aes256cbc.p12", std::string("cryptography"));
    REQUIRE(r.has_value());
    REQUIRE(r->identities.size() == 1);
    CHECK_FALSE(r->identities[0].leaf.has_value());
    CHECK(r->identities[0].key.info().type == "EC");
    CHECK(r->identities[0].key.info().curve == "P-256");
  }
}

TEST_CASE("Info reports safes, bags, encryption, MAC and warnings", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  SECTION("PBES2 + PBMAC1") {
    const auto r = decode_file(dir / "rfc9579-a3.p12", std::string("1234"));
    REQUIRE(r.has_value());
    CHECK(r->info.mac.present);
    CHECK(r->info.mac.verified);
    CHECK(r->info.mac.algorithm == "PBMAC1(PBKDF2-HMAC-SHA512, HMAC-SHA512)");
    REQUIRE(r->info.safes.size() == 2);
    CHECK(r->info.safes[0].content_type == "encryptedData");
    CHECK(r->info.safes[0].encryption == "PBES2/PBKDF2-HMAC-SHA256/AES-256-CBC");
    CHECK(r->info.safes[0].iterations == 2048);
    REQUIRE(r->info.safes[1].bags.size() == 1);
    CHECK(r->info.safes[1].bags[0].type == "pkcs8ShroudedKeyBag");
    CHECK(r->info.safes[1].bags[0].encryption == "PBES2/PBKDF2-HMAC-SHA256/AES-256-CBC");
  }
  SECTION("legacy RC2-40 and a SHA-1 MAC") {
    const auto r = decode_file(dir / "pyca-cert-rc2-key-3des.p12", std::string("cryptography"));
    REQUIRE(r.has_value());
    CHECK_FALSE(r->info.legacy_provider_used);  // RC2-40 is built in
    CHECK(r->info.mac.algorithm == "SHA-1");
    CHECK(r->info.safes.at(0).encryption == "pbeWithSHA1And40BitRC2-CBC");
    CHECK(r->info.safes.at(1).bags.at(0).encryption == "pbeWithSHA1And3-KeyTripleDES-CBC");
  }
  SECTION("no MAC, nested bag, secret bag, envelopedData") {
    const auto nested = decode_file(dir / "botan-safe_contents_bag_nested.pfx", std::nullopt);
    REQUIRE(nested.has_value());
    CHECK_FALSE(nested->info.mac.present);
    CHECK(nested->info.password_used == PasswordKind::unused);
    REQUIRE(nested->info.safes.at(0).bags.size() == 2);
    CHECK(nested->info.safes[0].bags[0].type == "safeContentsBag");
    CHECK(nested->info.safes[0].bags[1].type == "certBag");
    CHECK(nested->info.safes[0].bags[1].nesting == 1);
    CHECK(nested->info.safes[0].bags[1].certificate_sha256 == nested->extra_certs.at(0).sha256);
    CHECK(std::find(nested->info.warnings.begin(), nested->info.warnings.end(),
                    "no MAC: integrity unprotected") != nested->info.warnings.end());

    const auto secret = decode_file(dir / "botan-unknown_bag_secret.pfx", std::nullopt);
    REQUIRE(secret.has_value());
    CHECK(secret->extra_certs.size() == 1);
    CHECK(secret->info.safes.at(0).bags.at(0).type == "secretBag");

    const auto enveloped =
        decode_file(dir / "openssl-nomac_parse.p12", std::string("testpassword"));
    REQUIRE(enveloped.has_value());
    CHECK(enveloped->info.safes.at(0).content_type == "envelopedData");
    CHECK_FALSE(enveloped->info.warnings.empty());
  }
  SECTION("unsupported algorithm names the OID") {
    const auto r = decode_file(dir / "bc-gostPfx.p12", std::string("1"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::unsupported);
    CHECK(r.error().message.find("1.2.643.2.2.9") != std::string::npos);
  }
}

TEST_CASE("PBMAC1: the MAC is really verified. short and missing keyLength refused", "[pkcs12]") {
  const fs::path dir = vectors_dir();
  using detail::BerReader;
  const auto good = read_bytes(dir / "rfc9579-a1.p12");
  REQUIRE(decode(good, DecodeOptions{std::string("1234")}).has_value());

  // Locate the MAC value: PFX -> third element (MacData) -> DigestInfo -> OCTET STRING.
  auto pfx = detail::parse_single(detail::Bytes(good.data(), good.size()), "test");
  REQUIRE(pfx.has_value());
  auto r = detail::children(*pfx, "test");
  REQUIRE(r.has_value());
  REQUIRE(r->next("v").has_value());
  auto auth_safe = r->next("a");
  REQUIRE(auth_safe.has_value());
  auto mac_data = r->next("m");
  REQUIRE(mac_data.has_value());
  auto mr = detail::children(*mac_data, "m");
  auto digest_info = mr->next("d");
  auto dr = detail::children(*digest_info, "d");
  REQUIRE(dr->next("alg").has_value());
  auto digest = dr->next("digest");
  REQUIRE(digest.has_value());
  const auto digest_offset = static_cast<std::size_t>(digest->content.data() - good.data());

  SECTION("flipped MAC byte") {
    auto bad = good;
    bad[digest_offset + 3] ^= 0x01;
    const auto result = decode(bad, DecodeOptions{std::string("1234")});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::wrong_password);
  }
  SECTION("flipped content byte") {
    auto bad = good;
    const auto content_offset = static_cast<std::size_t>(auth_safe->content.data() - good.data());
    bad[content_offset + auth_safe->content.size() / 2] ^= 0x01;
    const auto result = decode(bad, DecodeOptions{std::string("1234")});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::wrong_password);
  }
  SECTION("wrong password") {
    const auto result = decode(good, DecodeOptions{std::string("12345")});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().code == Errc::wrong_password);
  }
  SECTION("short-key forgery refused with either password") {
    for (const char* pw : {"fakepassword", "realpassword"}) {
      const auto result = decode_file(dir / "go-pbmac1-short-key-bypass.p12", std::string(pw));
      REQUIRE_FALSE(result.has_value());
      CHECK(result.error().code == Errc::malformed_input);
      CHECK(result.error().message.find("keyLength") != std::string::npos);
    }
  }
}

}  // namespace getcert::pkcs12::test
