// The Certificate model over the generated PKI, with `openssl` as the oracle for every value
// it can print (names, serial, dates, fingerprints, SPKI pin).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "support/cert_builder.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/issued_leaf.hpp"

using getcert::Certificate;
using getcert::Errc;
using getcert::test::openssl;
using getcert::test::pki;
using getcert::test::read_file;

namespace {

Certificate load(const std::string& name) {
  auto certs = getcert::parse_certificates_pem(read_file(pki(name + ".pem")));
  if (!certs) FAIL(name << ".pem: " << certs.error().message);
  REQUIRE(certs->size() == 1);
  return certs->front();
}

// The value after the first '=' of `openssl x509 -noout OPTION` output, without the newline.
std::string openssl_field(const std::string& name, const std::vector<std::string>& options) {
  std::vector<std::string> args{"x509", "-in", pki(name + ".pem"), "-noout"};
  args.insert(args.end(), options.begin(), options.end());
  std::string out = openssl(args);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.substr(out.find('=') + 1);
}

std::string without_colons(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ':'), s.end());
  return s;
}

const char* const kAllCerts[] = {"root",      "intermediate", "untrusted-root", "rsa",
                                 "ecdsa",     "ed25519",      "wildcard",       "ipsan",
                                 "wronghost", "expired",      "notyet",         "sni-a",
                                 "client",    "selfsigned",   "untrusted"};

const std::string kRoot = "CN=getcert Test Root CA,O=getcert tests";
const std::string kIntermediate = "CN=getcert Test Intermediate CA,O=getcert tests";

}  // namespace

TEST_CASE("subject and issuer are RFC 2253 and match openssl", "[certificate]") {
  for (const char* name : kAllCerts) {
    INFO("certificate: " << name);
    const Certificate c = load(name);
    CHECK(c.subject == openssl_field(name, {"-subject", "-nameopt", "RFC2253"}));
    CHECK(c.issuer == openssl_field(name, {"-issuer", "-nameopt", "RFC2253"}));
  }
  const Certificate rsa = load("rsa");
  CHECK(rsa.subject == "CN=rsa.test");
  CHECK(rsa.subject_cn == "rsa.test");
  CHECK(rsa.issuer == kIntermediate);
  CHECK(rsa.issuer_cn == "getcert Test Intermediate CA");
  CHECK(rsa.display_name() == "rsa.test");
  CHECK(load("intermediate").issuer == kRoot);
  CHECK(load("root").subject == kRoot);
}

TEST_CASE("serial and validity dates match openssl", "[certificate]") {
  for (const char* name : kAllCerts) {
    INFO("certificate: " << name);
    const Certificate c = load(name);
    CHECK(c.serial == openssl_field(name, {"-serial"}));
    std::string not_before = openssl_field(name, {"-startdate", "-dateopt", "iso_8601"});
    std::string not_after = openssl_field(name, {"-enddate", "-dateopt", "iso_8601"});
    std::replace(not_before.begin(), not_before.end(), ' ', 'T');
    std::replace(not_after.begin(), not_after.end(), ' ', 'T');
    CHECK(getcert::format_utc(c.not_before) == not_before);
    CHECK(getcert::format_utc(c.not_after) == not_after);
  }
}

TEST_CASE("subject alternative names, including IPv6", "[certificate]") {
  using V = std::vector<std::string>;
  const Certificate rsa = load("rsa");
  CHECK(rsa.sans.dns == V{"localhost", "rsa.test"});
  CHECK(rsa.sans.ip == V{"127.0.0.1", "::1"});
  CHECK(rsa.sans.uri.empty());
  CHECK(rsa.sans.email.empty());

  const Certificate ipsan = load("ipsan");
  CHECK(ipsan.sans.dns.empty());
  CHECK(ipsan.sans.ip == V{"127.0.0.1", "::1"});

  CHECK(load("wildcard").sans.dns == V{"*.wild.test"});
  CHECK(load("wronghost").sans.dns == V{"other.example"});
  const Certificate client = load("client");
  CHECK(client.sans.dns.empty());
  CHECK(client.sans.ip.empty());
  CHECK(load("root").sans.dns.empty());
}

TEST_CASE("key type, size and curve", "[certificate]") {
  const Certificate rsa = load("rsa");
  CHECK(rsa.key.type == "RSA");
  CHECK(rsa.key.bits == 2048);
  CHECK(rsa.key.curve.empty());

  const Certificate ec = load("ecdsa");
  CHECK(ec.key.type == "EC");
  CHECK(ec.key.bits == 256);
  CHECK(ec.key.curve == "P-256");

  const Certificate ed = load("ed25519");
  CHECK(ed.key.type == "Ed25519");
  CHECK(ed.key.bits == 256);
  CHECK(ed.key.curve.empty());

  // The signature algorithm is the issuer's: every leaf here is signed by a P-256 CA.
  CHECK(rsa.signature_algorithm == "ecdsa-with-SHA256");
  CHECK(ed.signature_algorithm == "ecdsa-with-SHA256");
}

TEST_CASE("CA and self-signed flags", "[certificate]") {
  struct Case {
    const char* name;
    bool is_ca;
    bool self_signed;
  };
  const Case cases[] = {{"root", true, true},          {"untrusted-root", true, true},
                        {"intermediate", true, false}, {"ecdsa", false, false},
                        {"selfsigned", false, true},   {"untrusted", false, false},
                        {"client", false, false}};
  for (const auto& c : cases) {
    INFO("certificate: " << c.name);
    const Certificate cert = load(c.name);
    CHECK(cert.is_ca == c.is_ca);
    CHECK(cert.self_signed == c.self_signed);
  }
}

// Answers are remembered by fingerprint (a fleet sees the same roots on every fetch): a copy
// whose signature was damaged is a different certificate and must not inherit the answer, in
// either order, and asking again must not change it.
TEST_CASE("self-signed needs a signature that verifies, however often it is asked",
          "[certificate]") {
  const Certificate root = load("root");
  std::vector<std::uint8_t> damaged = root.der;
  damaged[damaged.size() - 8] ^= 0x01;  // inside the signature value, the last field
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const auto broken = getcert::parse_certificate_der(damaged);
    REQUIRE(broken.has_value());
    CHECK(broken->subject == root.subject);
    CHECK(broken->issuer == root.issuer);
    CHECK_FALSE(broken->self_signed);
    const auto intact = getcert::parse_certificate_der(root.der);
    REQUIRE(intact.has_value());
    CHECK(intact->self_signed);
  }
}

TEST_CASE("AIA caIssuers URL of intermediate-issued leaves", "[certificate]") {
  CHECK(load("ecdsa").ca_issuers_urls ==
        std::vector<std::string>{"http://127.0.0.1:18080/intermediate.der"});
  CHECK(load("selfsigned").ca_issuers_urls.empty());
  CHECK(load("ecdsa").ocsp_urls.empty());
}

TEST_CASE("fingerprints equal openssl x509 -fingerprint", "[certificate]") {
  for (const char* name : kAllCerts) {
    INFO("certificate: " << name);
    const Certificate c = load(name);
    CHECK(c.sha256 == without_colons(openssl_field(name, {"-fingerprint", "-sha256"})));
    CHECK(c.sha1 == without_colons(openssl_field(name, {"-fingerprint", "-sha1"})));
    CHECK(c.sha256.size() == 64);
  }
}

TEST_CASE("SPKI pin equals the openssl pipeline", "[certificate]") {
  for (const char* name : {"rsa", "ecdsa", "ed25519", "root"}) {
    INFO("certificate: " << name);
    const auto r = getcert::test::run_shell(
        std::string(GETCERT_TEST_OPENSSL) + " x509 -in '" + pki(std::string(name) + ".pem") +
        "' -noout -pubkey | " + GETCERT_TEST_OPENSSL + " pkey -pubin -outform der | " +
        GETCERT_TEST_OPENSSL + " dgst -sha256 -binary | base64");
    REQUIRE(r.exit_code == 0);
    std::string expected = r.out;
    while (!expected.empty() && expected.back() == '\n') expected.pop_back();
    REQUIRE(expected.size() == 44);
    CHECK(load(name).spki_sha256 == expected);
  }
}

TEST_CASE("pem() and to_pem() round-trip the files byte for byte", "[certificate]") {
  for (const char* name : kAllCerts) {
    INFO("certificate: " << name);
    CHECK(load(name).pem() == read_file(pki(std::string(name) + ".pem")));
  }
  const std::string chain_text = read_file(pki("ecdsa-chain.pem"));
  auto chain = getcert::parse_certificates_pem(chain_text);
  REQUIRE(chain);
  REQUIRE(chain->size() == 2);
  CHECK(getcert::to_pem(*chain) == chain_text);
  CHECK(chain->at(1).subject == kIntermediate);
}

TEST_CASE("DER parsing keeps the exact bytes and rejects trailing data", "[certificate]") {
  const Certificate pem = load("ecdsa");
  auto der = getcert::parse_certificate_der(pem.der);
  REQUIRE(der);
  CHECK(der->der == pem.der);
  CHECK(der->sha256 == pem.sha256);

  const std::string der_file = openssl({"x509", "-in", pki("intermediate.pem"), "-outform", "DER"});
  const std::vector<std::uint8_t> oracle(der_file.begin(), der_file.end());
  CHECK(load("intermediate").der == oracle);

  auto with_trailer = pem.der;
  with_trailer.push_back(0);
  auto trailing = getcert::parse_certificate_der(with_trailer);
  REQUIRE_FALSE(trailing);
  CHECK(trailing.error().code == Errc::malformed_input);

  auto garbage = getcert::parse_certificate_der({0x30, 0x03, 0x01, 0x02});
  REQUIRE_FALSE(garbage);
  CHECK(garbage.error().code == Errc::malformed_input);
}

TEST_CASE("PEM parsing skips other blocks and rejects corrupt input", "[certificate]") {
  const std::string with_key = read_file(pki("ecdsa.key")) + read_file(pki("ecdsa-chain.pem"));
  auto certs = getcert::parse_certificates_pem(with_key);
  REQUIRE(certs);
  CHECK(certs->size() == 2);

  auto none = getcert::parse_certificates_pem(read_file(pki("ecdsa.key")));
  REQUIRE_FALSE(none);
  CHECK(none.error().code == Errc::malformed_input);

  auto empty = getcert::parse_certificates_pem("");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == Errc::malformed_input);

  std::string corrupt = read_file(pki("ecdsa.pem"));
  corrupt.replace(corrupt.find('\n') + 10, 8, "!!!!!!!!");
  auto bad = getcert::parse_certificates_pem(corrupt);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::malformed_input);
}

TEST_CASE("days_left counts whole days and goes negative once expired", "[certificate]") {
  const Certificate c = load("ecdsa");
  CHECK(c.days_left(c.not_after) == 0);
  CHECK(c.days_left(c.not_after - 1) == 0);
  CHECK(c.days_left(c.not_after - 86400) == 1);
  CHECK(c.days_left(c.not_after + 1) == -1);
  CHECK(c.days_left(c.not_after + 12LL * 86400) == -12);
  CHECK(getcert::format_utc(0) == "1970-01-01T00:00:00Z");
}

TEST_CASE("embedded SCTs and must-staple, with openssl as the oracle", "[certificate]") {
  getcert::test::TempDir tmp;
  getcert::test::TestSct first;
  for (std::size_t i = 0; i < first.log_id.size(); ++i) {
    first.log_id[i] = static_cast<std::uint8_t>(i + 1);
  }
  first.timestamp_ms = 1767225600123;  // 2026-01-01T00:00:00.123Z
  getcert::test::TestSct second;
  second.log_id.fill(0xAB);
  second.timestamp_ms = 1767225660000;
  const auto served = getcert::test::issue_must_staple_leaf(tmp, "ct", "ct.test", {first, second});
  const std::string leaf_file = tmp / "ct.pem";
  // The oracle reads the same list: two SCTs, the first log's ID, the timestamp.
  const std::string text = openssl({"x509", "-in", leaf_file, "-noout", "-text"});
  REQUIRE_THAT(text, Catch::Matchers::Contains("CT Precertificate SCTs"));
  CHECK_THAT(text, Catch::Matchers::Contains("01:02:03:04:05:06:07:08"));
  CHECK_THAT(text, Catch::Matchers::Contains("Jan  1 00:00:00.123 2026 GMT"));
  CHECK_THAT(text, Catch::Matchers::Contains("TLS Feature"));

  auto certs = getcert::parse_certificates_pem(read_file(leaf_file));
  REQUIRE(certs);
  const Certificate& c = certs->front();
  REQUIRE(c.scts.size() == 2);
  CHECK(c.scts[0].version == 0);
  CHECK(c.scts[0].log_id == "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=");
  CHECK(c.scts[0].timestamp_ms == 1767225600123);
  CHECK(getcert::format_utc_ms(c.scts[0].timestamp_ms) == "2026-01-01T00:00:00.123Z");
  CHECK(c.scts[0].signature_algorithm == "ecdsa-with-SHA256");
  CHECK(c.scts[1].log_id == "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=");
  CHECK(getcert::format_utc_ms(c.scts[1].timestamp_ms) == "2026-01-01T00:01:00.000Z");
  CHECK(c.must_staple);

  for (const char* name : kAllCerts) {
    INFO(name);
    const auto plain = load(name);
    CHECK(plain.scts.empty());
    CHECK_FALSE(plain.must_staple);
  }
}

TEST_CASE("tbs_sha256 is the TBS as the CA signed it, without its CT extensions", "[certificate]") {
  using getcert::test::make_cert;
  using getcert::test::model;
  using getcert::test::resign;
  using getcert::test::with_extension;
  const auto ca_key = getcert::test::new_key();
  const auto leaf_key = getcert::test::new_key();
  auto spec = getcert::test::cert_spec("tbs-sha256.test", "getcert TBS test CA", leaf_key.get(),
                                       ca_key.get());
  spec.ca = false;
  spec.san = "DNS:tbs-sha256.test";
  const auto plain = make_cert(spec);
  const Certificate c = model(plain);

  // The oracle: openssl cuts the tbsCertificate out of the DER (the element at offset 4, after
  // the outer SEQUENCE's 4-byte header) and hashes it.
  const auto openssl_tbs_sha256 = [](const Certificate& cert) {
    REQUIRE(cert.der.size() > 255);
    REQUIRE(cert.der[1] == 0x82);
    const getcert::test::TempDir tmp;
    getcert::test::write_file(tmp / "cert.pem", cert.pem());
    openssl({"asn1parse", "-in", tmp / "cert.pem", "-strparse", "4", "-noout", "-out",
             tmp / "tbs.der"});
    std::string hex = openssl({"dgst", "-sha256", "-r", tmp / "tbs.der"}).substr(0, 64);
    std::transform(hex.begin(), hex.end(), hex.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    return hex;
  };
  CHECK(c.tbs_sha256 == openssl_tbs_sha256(c));
  CHECK(c.tbs_sha256.size() == 64);
  CHECK(c.tbs_sha256 != c.sha256);

  getcert::test::TestSct sct;
  sct.log_id.fill(0x42);
  sct.timestamp_ms = 1767225600000;
  const auto sct_list = getcert::test::sct_list_der({sct});
  const std::string kSctList = "1.3.6.1.4.1.11129.2.4.2";
  const std::string kPoison = "1.3.6.1.4.1.11129.2.4.3";
  const std::vector<std::uint8_t> kNull{0x05, 0x00};

  SECTION("the same TBS: signed again, with an SCT list, as a precertificate") {
    const auto with_scts =
        model(with_extension(plain, kSctList, sct_list, false, -1, ca_key.get()));
    REQUIRE(with_scts.scts.size() == 1);  // the list is read: it is there
    const auto precert = with_extension(plain, kPoison, kNull, true, 0, ca_key.get());
    const struct {
      const char* what;
      Certificate cert;
    } same[] = {
        {"signed again (ECDSA: another signature)", model(resign(plain, ca_key.get()))},
        {"with an SCT list, last", with_scts},
        {"a precertificate: the poison first", model(precert)},
        {"the poison and an SCT list",
         model(with_extension(precert, kSctList, sct_list, false, 2, ca_key.get()))},
        {"two SCT lists",
         model(with_extension(with_extension(plain, kSctList, sct_list, false, 1, ca_key.get()),
                              kSctList, sct_list, false, -1, ca_key.get()))},
    };
    for (const auto& s : same) {
      INFO(s.what);
      CHECK(s.cert.sha256 != c.sha256);
      CHECK(s.cert.spki_sha256 == c.spki_sha256);
      CHECK(s.cert.tbs_sha256 == c.tbs_sha256);
    }
  }

  SECTION("another TBS: any other extension, another certificate for the same name") {
    const auto other_ext =
        model(with_extension(plain, "1.3.6.1.4.1.11129.2.4.99", kNull, false, -1, ca_key.get()));
    CHECK(other_ext.tbs_sha256 == openssl_tbs_sha256(other_ext));
    CHECK(other_ext.tbs_sha256 != c.tbs_sha256);
    const auto other_key = getcert::test::new_key();
    auto rekeyed = spec;
    rekeyed.key = other_key.get();
    CHECK(model(make_cert(rekeyed)).tbs_sha256 != c.tbs_sha256);
  }

  SECTION("a certificate whose only extension is the poison: as if it had none") {
    const auto bare = getcert::test::without_extensions(plain, ca_key.get());
    const Certificate bare_model = model(bare);
    // No empty extensions field ([3] { SEQUENCE {} }) either: RFC 5280 allows none.
    const std::vector<std::uint8_t> empty_extensions{0xA3, 0x02, 0x30, 0x00};
    CHECK(std::search(bare_model.der.begin(), bare_model.der.end(), empty_extensions.begin(),
                      empty_extensions.end()) == bare_model.der.end());
    CHECK(bare_model.tbs_sha256 == openssl_tbs_sha256(bare_model));
    CHECK(bare_model.tbs_sha256 != c.tbs_sha256);
    CHECK(model(with_extension(bare, kPoison, kNull, true, -1, ca_key.get())).tbs_sha256 ==
          bare_model.tbs_sha256);
  }
}
