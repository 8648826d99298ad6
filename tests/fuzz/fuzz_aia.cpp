// Fuzz target: an AIA server's answer (a DER or PEM certificate, a PKCS#7 in DER, BER or PEM),
// walked one certificate at a time by decode_aia_answer. Invariants: success returns between 1
// and kMaxAiaCertificates certificates, each of which parses again from its own DER; failure is
// malformed_input or limit_exceeded (the deadline is far away) with a message naming the URL.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "http/aia.hpp"
#include "invariant.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using getcert::fuzz::require;
  const std::vector<std::uint8_t> body(data, data + size);
  const std::string url = "http://127.0.0.1:1/issuer.p7c";
  const auto far = getcert::detail::Clock::now() + std::chrono::hours(1);
  const auto certs = getcert::detail::decode_aia_answer(body, url, far, std::chrono::hours(1));
  if (!certs) {
    const auto code = certs.error().code;
    require(code == getcert::Errc::malformed_input || code == getcert::Errc::limit_exceeded,
            "failure is malformed_input or limit_exceeded");
    require(certs.error().message.find(url) != std::string::npos, "the message names the URL");
    return 0;
  }
  require(!certs->empty(), "success returns a certificate");
  require(certs->size() <= getcert::detail::kMaxAiaCertificates, "at most the cap");
  for (const auto& c : *certs) {
    const auto again = getcert::parse_certificates(c.der);
    require(again.has_value() && again->size() == 1, "each certificate parses from its DER");
  }
  return 0;
}
