// Fuzz target: reading certificates from a file as `getcert show` does (PEM, DER, PKCS#7 in DER
// or PEM), then every field of the model that renderings print. Invariants: each certificate's
// DER parses again to the same certificate (tbs_sha256 included), and the PEM of what was read
// reads back whole.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/text.hpp"
#include "invariant.hpp"

namespace {

using getcert::fuzz::require;

// What text and JSON renderings do with the untrusted fields.
void render(const std::string& field) {
  static_cast<void>(getcert::escape_untrusted(field));
  static_cast<void>(getcert::valid_utf8(field));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  const auto certs = getcert::parse_certificates(bytes);
  if (!certs) {
    require(certs.error().code == getcert::Errc::malformed_input, "failure is malformed_input");
    require(!certs.error().message.empty(), "failure has a message");
    return 0;
  }
  require(!certs->empty(), "success returns a certificate");
  // A fixed "now": the fuzzer must be deterministic.
  constexpr std::int64_t kNow = 1'800'000'000;
  for (const auto& c : *certs) {
    for (const auto* field : {&c.subject, &c.issuer, &c.subject_cn, &c.issuer_cn, &c.serial,
                              &c.signature_algorithm, &c.key.type, &c.key.curve}) {
      render(*field);
    }
    for (const auto* list :
         {&c.sans.dns, &c.sans.ip, &c.sans.uri, &c.sans.email, &c.ca_issuers_urls, &c.ocsp_urls}) {
      for (const auto& s : *list) render(s);
    }
    static_cast<void>(c.display_name());
    static_cast<void>(c.days_left(kNow));
    static_cast<void>(getcert::format_utc(c.not_before));
    static_cast<void>(getcert::format_utc(c.not_after));
    const auto again = getcert::parse_certificate_der(c.der);
    require(again.has_value(), "a certificate's DER parses again");
    require(
        again->sha256 == c.sha256 && again->subject == c.subject && again->not_after == c.not_after,
        "a certificate's DER parses to the same certificate");
    // tbs_sha256 walks the received DER to strip CT extensions: it always yields a hash.
    require(c.tbs_sha256.size() == 64 && again->tbs_sha256 == c.tbs_sha256,
            "tbs_sha256 is a SHA-256 and the same on a second parse");
  }
  const auto back = getcert::parse_certificates_pem(getcert::to_pem(*certs));
  require(back.has_value() && back->size() == certs->size(), "to_pem reads back whole");
  return 0;
}
