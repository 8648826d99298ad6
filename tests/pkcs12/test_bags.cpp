// Hand-built PFX files for bag and attribute kinds no vector or producer covers: SDSI
// certificates, CRL and unknown bags, unknown and non-BMP attributes, nesting at the limit.

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::test {
namespace {

using namespace getcert::test::asn1;  // NOLINT(google-build-using-namespace)

Der bag(const std::string& type, const Der& value, const Der& attributes = {}) {
  return seq({oid(type), explicit0(value), attributes.empty() ? Der{} : set({attributes})});
}

Der attribute(const std::string& type, const Der& value) { return seq({oid(type), set({value})}); }

// PFX v3 without MAC holding one data safe with `bags`.
Der pfx(const Der& bags) {
  const Der safe = seq({oid("1.2.840.113549.1.7.1"), explicit0(octets(seq({bags})))});
  const Der auth_safe = seq({oid("1.2.840.113549.1.7.1"), explicit0(octets(seq({safe})))});
  return seq({tlv(0x02, {3}), auth_safe});
}

Der nested(int levels, const Der& inner) {
  Der bags = inner;
  for (int i = 0; i < levels; ++i) bags = bag("1.2.840.113549.1.12.10.1.6", seq({bags}));
  return bags;
}

const char* kCertBag = "1.2.840.113549.1.12.10.1.3";

}  // namespace

TEST_CASE("hand-built bags: SDSI, CRL, unknown types and attributes are reported, not fatal",
          "[pkcs12]") {
  const TestPki& pki = test_pki();
  const auto root_pem = parse_certificates_pem(read_file(pki.root_cert));
  REQUIRE(root_pem.has_value());
  const Der cert_der = root_pem->at(0).der;
  TempDir tmp;
  REQUIRE(run({"openssl", "pkcs8", "-topk8", "-nocrypt", "-in", pki.root_key.string(), "-outform",
               "DER", "-out", tmp / "key.p8"})
              .exit_code == 0);
  const Der key_der = read_bytes(tmp / "key.p8");
  REQUIRE_FALSE(key_der.empty());

  // friendlyName "é😀" as BMPString (surrogate pair), an unknown attribute, a Microsoft one.
  const Der friendly = tlv(0x1E, {0x00, 0xE9, 0xD8, 0x3D, 0xDE, 0x00});
  const Der attrs = cat({attribute("1.2.840.113549.1.9.20", friendly),
                         attribute("1.2.3.4.5", tlv(0x0C, {'h', 'i'})),
                         attribute("1.3.6.1.4.1.311.17.3.71", tlv(0x1E, {0x00, 'M'})),
                         attribute("1.2.840.113549.1.9.21", octets({0x01, 0x02}))});
  const Der bags = cat({
      bag(kCertBag, seq({oid("1.2.840.113549.1.9.22.2"), explicit0(tlv(0x16, {'s'}))})),
      bag("1.2.840.113549.1.12.10.1.4",
          seq({oid("1.2.840.113549.1.9.23.1"), explicit0(octets({'x'}))})),
      bag("1.2.3.4", tlv(0x05, {})),
      bag(kCertBag, seq({oid("1.2.840.113549.1.9.22.1"), explicit0(octets(cert_der))}), attrs),
      bag("1.2.840.113549.1.12.10.1.1", key_der,
          attribute("1.2.840.113549.1.9.21", octets({0x01, 0x02}))),
  });
  const auto decoded = decode(pfx(bags));
  INFO((decoded ? std::string() : decoded.error().message));
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->identities.size() == 1);
  const auto& id = decoded->identities[0];
  REQUIRE(id.leaf.has_value());
  CHECK(id.leaf->der == cert_der);
  CHECK(id.chain.empty());
  CHECK(id.leaf_attributes.friendly_name == "\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(id.leaf_attributes.local_key_id == "0102");
  const auto& all = id.leaf_attributes.all;
  REQUIRE(all.size() == 4);
  CHECK(all[1].oid == "1.2.3.4.5");
  CHECK(all[1].value == "hi");
  CHECK(all[2].name == "microsoft(1.3.6.1.4.1.311.17.3.71)");
  CHECK(all[2].value == "M");

  const auto& info = decoded->info;
  REQUIRE(info.safes.size() == 1);
  const auto& b = info.safes[0].bags;
  REQUIRE(b.size() == 5);
  CHECK(b[0].type == "certBag");
  CHECK(b[0].description.find("sdsiCertificate") != std::string::npos);
  CHECK(b[1].type == "crlBag");
  CHECK(b[2].type == "1.2.3.4");
  CHECK(b[4].type == "keyBag");
  auto has_warning = [&](const std::string& text) {
    return std::any_of(info.warnings.begin(), info.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  CHECK(has_warning("no MAC"));
  CHECK(has_warning("CRL bag ignored"));
  CHECK(has_warning("SDSI"));
  CHECK(has_warning("1.2.3.4"));
}

TEST_CASE("nested SafeContents: 8 levels are read, 9 are malformed_input", "[pkcs12]") {
  const TestPki& pki = test_pki();
  const auto root_pem = parse_certificates_pem(read_file(pki.root_cert));
  REQUIRE(root_pem.has_value());
  const Der cert =
      bag(kCertBag, seq({oid("1.2.840.113549.1.9.22.1"), explicit0(octets(root_pem->at(0).der))}));
  const auto ok = decode(pfx(nested(kMaxSafeContentsNesting, cert)));
  REQUIRE(ok.has_value());
  CHECK(ok->extra_certs.size() == 1);
  CHECK(ok->info.safes.at(0).bags.back().nesting == kMaxSafeContentsNesting);
  const auto deep = decode(pfx(nested(kMaxSafeContentsNesting + 1, cert)));
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().code == Errc::malformed_input);
  CHECK(deep.error().message.find("nested") != std::string::npos);
}

TEST_CASE("PBES2 shrouded keys with every PBKDF2 PRF, and no MAC to check the password",
          "[pkcs12]") {
  const TestPki& pki = test_pki();
  TempDir tmp;
  for (const char* prf :
       {"hmacWithSHA1", "hmacWithSHA224", "hmacWithSHA256", "hmacWithSHA384", "hmacWithSHA512"}) {
    INFO(prf);
    const fs::path out = tmp / (std::string(prf) + ".p8");
    REQUIRE(run({"openssl", "pkcs8", "-topk8", "-v2", "aes-128-cbc", "-v2prf", prf, "-iter", "2048",
                 "-in", pki.root_key.string(), "-outform", "DER", "-out", out.string(), "-passout",
                 "pass:pk8-pass"})
                .exit_code == 0);
    const Der file = pfx(bag("1.2.840.113549.1.12.10.1.2", read_bytes(out)));
    const auto decoded = decode(file, DecodeOptions{std::string("pk8-pass")});
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->identities.size() == 1);
    CHECK(decoded->identities[0].key.info().curve == "P-256");
    CHECK(decoded->info.safes.at(0).bags.at(0).encryption ==
          "PBES2/PBKDF2-HMAC-" + std::string(prf + 8) + "/AES-128-CBC");
    CHECK(decoded->info.password_used == PasswordKind::given);

    const auto wrong = decode(file, DecodeOptions{std::string("other")});
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().code == Errc::wrong_password);
    const auto none = decode(file);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code == Errc::wrong_password);
    CHECK(none.error().message.find("password is required") != std::string::npos);
  }
}

TEST_CASE("structural nonsense is malformed_input", "[pkcs12]") {
  SECTION("version 2") {
    Der v2 = pfx({});
    v2[4] = 2;  // 30 LL 02 01 03 -> version byte
    const auto r = decode(v2);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::malformed_input);
    CHECK(r.error().message.find("version 2") != std::string::npos);
  }
  SECTION("a bag value that is not [0] EXPLICIT") {
    const Der bad = seq({oid(kCertBag), octets({1})});
    const auto r = decode(pfx(bad));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::malformed_input);
  }
  SECTION("an empty PFX (no safes) decodes to nothing, with the MAC warning") {
    const auto r = decode(pfx({}));
    REQUIRE(r.has_value());
    CHECK(r->identities.empty());
    CHECK(r->extra_certs.empty());
  }
}

}  // namespace getcert::pkcs12::test
