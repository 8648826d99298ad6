// Fuzz target: judging OCSP responses and CRLs (the bytes a responder, a CRL distribution point
// or a TLS staple hands us). Each input is tried as an OCSP response and as a CRL, about two
// certificates: one the seeds say is good and one they say is revoked.
//
// The certificates below and the seeds in seeds/revocation were made once with openssl for
// fuzzing only (EC P-256, 100 years); their private keys were discarded.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "getcert/text.hpp"
#include "internal/ossl.hpp"
#include "invariant.hpp"
#include "verify/revocation.hpp"

namespace {

constexpr const char* kCaPem = R"(-----BEGIN CERTIFICATE-----
MIIBpDCCAUugAwIBAgIUOoA7zTWQz2nwEL3pTO1AobInzc4wCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwUZ2V0Y2VydCBmdXp6IHNlZWQgQ0EwIBcNMjYxMTMwMTIzMzM3
WhgPMjEyNjExMDYxMjMzMzdaMB8xHTAbBgNVBAMMFGdldGNlcnQgZnV6eiBzZWVk
IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZniw6BN7BPEXYyf4QUVrqAd+
6W41zkqimHoq32cJY7pzjxZQwKrX/jNNOZSIUp2IqxIC5EaJYx8YwylfbHWAGaNj
MGEwHQYDVR0OBBYEFF5Lzel+jhtUikV+82Ho+sTzEdajMB8GA1UdIwQYMBaAFF5L
zel+jhtUikV+82Ho+sTzEdajMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQD
AgGGMAoGCCqGSM49BAMCA0cAMEQCIGXbyErRN5xr/UKttR3e2MhISKK16aqZ7sZk
ykQTwo3LAiAkjSLRWHN5RDD7kK3vFPBaZeULF8YaaCvo4TFd+Bk6pA==
-----END CERTIFICATE-----
)";
constexpr const char* kGoodLeafPem = R"(-----BEGIN CERTIFICATE-----
MIICLjCCAdWgAwIBAgICEAEwCgYIKoZIzj0EAwIwHzEdMBsGA1UEAwwUZ2V0Y2Vy
dCBmdXp6IHNlZWQgQ0EwIBcNMjYxMTMwMTIzMzM3WhgPMjEyNjExMDYxMjMzMzda
MBQxEjAQBgNVBAMMCWZ1enoudGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IA
BHWUqelwO9kVZ4okN/iTdNIxgB+fPakRMiSN8w57+6GkOm8LcvSJuGrnmsQIUk9B
9euCKOR0H381LD4v6+Wc+nmjggEIMIIBBDAJBgNVHRMEAjAAMBoGA1UdEQQTMBGC
CWZ1enoudGVzdIcEfwAAATATBgNVHSUEDDAKBggrBgEFBQcDATBaBggrBgEFBQcB
AQROMEwwIwYIKwYBBQUHMAGGF2h0dHA6Ly8xMjcuMC4wLjE6MS9vY3NwMCUGCCsG
AQUFBzAChhlodHRwOi8vMTI3LjAuMC4xOjEvY2EuZGVyMCoGA1UdHwQjMCEwH6Ad
oBuGGWh0dHA6Ly8xMjcuMC4wLjE6MS9jYS5jcmwwHQYDVR0OBBYEFEsg680SQv8z
TwIQx22ZCmVa2z3TMB8GA1UdIwQYMBaAFF5Lzel+jhtUikV+82Ho+sTzEdajMAoG
CCqGSM49BAMCA0cAMEQCIHLur359SgxvF+zDOmJZhEy5jflZlswq5icDXDUgXFMm
AiAZTsVkPYA/mf2yI0O8GQUm2PgKXt9ITLyTt5HVy8J5GA==
-----END CERTIFICATE-----
)";
constexpr const char* kRevokedLeafPem = R"(-----BEGIN CERTIFICATE-----
MIICODCCAd2gAwIBAgICEAIwCgYIKoZIzj0EAwIwHzEdMBsGA1UEAwwUZ2V0Y2Vy
dCBmdXp6IHNlZWQgQ0EwIBcNMjYxMTMwMTIzMzM4WhgPMjEyNjExMDYxMjMzMzha
MBwxGjAYBgNVBAMMEXJldm9rZWQuZnV6ei50ZXN0MFkwEwYHKoZIzj0CAQYIKoZI
zj0DAQcDQgAEcaxxwwFtiQJ4brwJ87e/8S12e5r4eR7OfHNF9Q47ABbsDICivLRl
WYUK7u3NxEJz1LlQpM5VWxHQh6coSnhZUqOCAQgwggEEMAkGA1UdEwQCMAAwGgYD
VR0RBBMwEYIJZnV6ei50ZXN0hwR/AAABMBMGA1UdJQQMMAoGCCsGAQUFBwMBMFoG
CCsGAQUFBwEBBE4wTDAjBggrBgEFBQcwAYYXaHR0cDovLzEyNy4wLjAuMToxL29j
c3AwJQYIKwYBBQUHMAKGGWh0dHA6Ly8xMjcuMC4wLjE6MS9jYS5kZXIwKgYDVR0f
BCMwITAfoB2gG4YZaHR0cDovLzEyNy4wLjAuMToxL2NhLmNybDAdBgNVHQ4EFgQU
QeYbtIdEo0KgVhlG5l4UVaaOHIowHwYDVR0jBBgwFoAUXkvN6X6OG1SKRX7zYej6
xPMR1qMwCgYIKoZIzj0EAwIDSQAwRgIhAKBKN+stDqc0PdbIQAU0WHOCBzG9QpUZ
CgvUidz4qzkaAiEA74HwuCW/RSS8vgmwzAqRuVnDKeRTso1y8HMEtMmVKr0=
-----END CERTIFICATE-----
)";

using getcert::fuzz::require;

getcert::internal::X509Ptr read_pem(const char* pem) {
  getcert::internal::BioPtr bio(BIO_new_mem_buf(pem, -1));
  getcert::internal::X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  require(cert != nullptr, "the embedded certificates parse");
  return cert;
}

// One verified chain [leaf, CA] per leaf, built once: the fuzzer explores the response, not the
// setup. (Responses are judged against the chain alone: the CA on it is the issuer.)
struct Chain {
  getcert::internal::X509StackPtr chain{sk_X509_new_null()};

  explicit Chain(const char* leaf_pem) {
    auto ca = read_pem(kCaPem);
    auto leaf = read_pem(leaf_pem);
    require(sk_X509_push(chain.get(), leaf.get()) > 0, "the leaf goes into the chain");
    static_cast<void>(leaf.release());
    require(sk_X509_push(chain.get(), ca.get()) > 0, "the CA goes into the chain");
    static_cast<void>(ca.release());
  }
};

void check(const getcert::RevocationCheck& r) {
  using getcert::RevocationStatus;
  require(r.status == RevocationStatus::good || r.status == RevocationStatus::revoked ||
              r.status == RevocationStatus::unknown || r.status == RevocationStatus::error,
          "status is one of the documented values");
  static_cast<void>(getcert::escape_untrusted(r.detail));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Chain good(kGoodLeafPem);
  static const Chain revoked(kRevokedLeafPem);
  const std::vector<std::uint8_t> bytes(data, data + size);
  for (const Chain* c : {&good, &revoked}) {
    // A fixed time inside every seed's validity keeps the fuzzer deterministic.
    const getcert::detail::RevocationContext ctx{
        c->chain.get(), 1'800'000'000, std::chrono::steady_clock::now(), {}, {}};
    check(getcert::detail::check_ocsp_response(bytes, 0, ctx, getcert::RevocationSource::ocsp,
                                               "http://127.0.0.1:1/ocsp"));
    check(getcert::detail::check_crl_bytes(bytes, 0, "http://127.0.0.1:1/ca.crl", ctx));
  }
  return 0;
}
