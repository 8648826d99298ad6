// Decoding what an AIA "CA Issuers" server answers (http/aia.hpp): every form it may take,
// compared with OpenSSL's own PKCS#7 decoder as the oracle, and the two bounds a hostile answer
// meets: the certificate cap and the deadline, checked before each certificate.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "http/aia.hpp"
#include "support/asn1.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"

namespace {

namespace asn1 = getcert::test::asn1;
using Catch::Matchers::Contains;
using getcert::Certificate;
using getcert::Errc;
using getcert::detail::Clock;
using getcert::detail::decode_aia_answer;
using getcert::detail::kMaxAiaCertificates;
using getcert::test::pki;
using getcert::test::read_bytes;
using Bytes = std::vector<std::uint8_t>;
using namespace std::chrono_literals;

const std::string kUrl = "http://127.0.0.1:18080/intermediate.der";

getcert::Result<std::vector<Certificate>> decode(const Bytes& body,
                                                 Clock::time_point deadline = Clock::now() + 10s) {
  return decode_aia_answer(body, kUrl, deadline, 10s);
}

std::vector<std::string> subjects(const std::vector<Certificate>& certs) {
  std::vector<std::string> out;
  out.reserve(certs.size());
  for (const auto& c : certs) out.push_back(c.subject);
  return out;
}

Bytes bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

// A certs-only SignedData holding `certs` (already encoded) as its [0] IMPLICIT SET. With
// `indefinite`, every constructed wrapper uses BER's indefinite length, as streaming encoders do.
Bytes certs_only(const Bytes& certs, bool indefinite = false) {
  auto wrap = [indefinite](std::uint8_t tag, const Bytes& content) {
    if (!indefinite) return asn1::tlv(tag, content);
    Bytes out{tag, 0x80};
    out.insert(out.end(), content.begin(), content.end());
    out.insert(out.end(), {0x00, 0x00});
    return out;
  };
  const Bytes signed_data = wrap(0x30, asn1::cat({asn1::integer(1), asn1::set({}),
                                                  wrap(0x30, asn1::oid("1.2.840.113549.1.7.1")),
                                                  wrap(0xA0, certs), asn1::set({})}));
  return wrap(0x30, asn1::cat({asn1::oid("1.2.840.113549.1.7.2"), wrap(0xA0, signed_data)}));
}

Bytes copies(const Bytes& der, std::size_t n) {
  Bytes out;
  for (std::size_t i = 0; i < n; ++i) out.insert(out.end(), der.begin(), der.end());
  return out;
}

}  // namespace

TEST_CASE("an AIA answer decodes in every form a CA serves", "[aia]") {
  const Bytes der = read_bytes(pki("intermediate.der"));
  const auto root = read_bytes(pki("root.pem"));
  const std::string intermediate_subject = getcert::parse_certificate_der(der)->subject;

  SECTION("one DER certificate") {
    auto got = decode(der);
    REQUIRE(got);
    CHECK(subjects(*got) == std::vector<std::string>{intermediate_subject});
    CHECK(got->front().der == der);
  }
  SECTION("PEM certificates, other blocks skipped") {
    const std::string text = "junk\n" + getcert::test::read_file(pki("good.key")) +
                             getcert::test::read_file(pki("good-chain.pem"));
    auto got = decode(bytes_of(text));
    REQUIRE(got);
    CHECK(subjects(*got) == subjects(*getcert::parse_certificates_pem(text)));
  }
  SECTION("a certs-only PKCS#7 as openssl crl2pkcs7 writes it, DER and PEM") {
    getcert::test::TempDir dir;
    for (const std::string form : {"DER", "PEM"}) {
      INFO(form);
      const std::string out = dir / ("bundle." + form);
      getcert::test::openssl({"crl2pkcs7", "-nocrl", "-certfile", pki("good-chain.pem"),
                              "-certfile", pki("root.pem"), "-outform", form, "-out", out});
      const Bytes body = read_bytes(out);
      auto got = decode(body);
      REQUIRE(got);
      // The oracle: OpenSSL's whole-structure decoder, behind parse_certificates().
      auto expected = getcert::parse_certificates(body);
      REQUIRE(expected);
      CHECK(expected->size() == 3);
      CHECK(subjects(*got) == subjects(*expected));
    }
  }
  SECTION("a BER PKCS#7 with indefinite lengths") {
    const Bytes body = certs_only(asn1::cat({der, der}), true);
    auto got = decode(body);
    REQUIRE(got);
    CHECK(subjects(*got) == std::vector<std::string>{intermediate_subject, intermediate_subject});
    auto expected = getcert::parse_certificates(body);
    REQUIRE(expected);
    CHECK(expected->size() == 2);
  }
  SECTION("exactly the cap") {
    auto got = decode(certs_only(copies(der, kMaxAiaCertificates)));
    REQUIRE(got);
    CHECK(got->size() == kMaxAiaCertificates);
  }
}

TEST_CASE("an AIA answer that is not certificates is malformed input naming the URL", "[aia]") {
  const Bytes der = read_bytes(pki("intermediate.der"));
  Bytes truncated = certs_only(copies(der, 3));
  truncated.resize(truncated.size() - 10);
  Bytes trailing = der;
  trailing.push_back(0x00);
  const std::vector<std::pair<const char*, Bytes>> cases = {
      {"empty", {}},
      {"HTML", bytes_of("<html>not found</html>")},
      {"a PKCS#7 without certificates", certs_only({})},
      {"a truncated PKCS#7", truncated},
      {"a certificate with a byte after it", trailing},
      {"a corrupt PEM block",
       bytes_of("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n")},
      {"endless nesting", copies({0x30, 0x80}, 2000)},
  };
  for (const auto& [name, body] : cases) {
    INFO(name);
    auto got = decode(body);
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::malformed_input);
    CHECK(got.error().message ==
          "the AIA server at " + kUrl + " did not serve a certificate (DER, PEM or PKCS#7)");
  }
}

TEST_CASE("an AIA answer with more certificates than the cap is refused", "[aia]") {
  const Bytes der = read_bytes(pki("intermediate.der"));
  const std::string block = getcert::test::read_file(pki("intermediate.pem"));
  std::string pem;
  for (std::size_t i = 0; i <= kMaxAiaCertificates; ++i) pem += block;
  for (const auto& body : {certs_only(copies(der, kMaxAiaCertificates + 1)), bytes_of(pem)}) {
    auto got = decode(body);
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::limit_exceeded);
    CHECK(got.error().message == "the AIA server at " + kUrl +
                                     " sent more than 100 certificates (getcert's limit for one "
                                     "answer)");
  }
}

TEST_CASE("decoding an AIA answer stops at the deadline", "[aia]") {
  const Bytes der = read_bytes(pki("intermediate.der"));
  const std::string pem = getcert::test::read_file(pki("intermediate.pem"));
  for (const auto& body : {der, certs_only(copies(der, 5)), bytes_of(pem)}) {
    auto got = decode_aia_answer(body, kUrl, Clock::now() - 1ms, 2s);
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::timeout);
    CHECK_THAT(got.error().message, Contains("the AIA server at " + kUrl + " timed out after 2 s"));
    CHECK_THAT(got.error().message, Contains("the deadline passed"));
  }
}
