#include "http/aia.hpp"
#include "http/http.hpp"
#include "internal/ossl.hpp"
#include "internal/x509_util.hpp"
#include "net/timings.hpp"

namespace getcert::detail {

Result<std::vector<Certificate>> download_issuers(const std::string& url,
                                                  Clock::time_point deadline,
                                                  const std::string& proxy) {
  StepTimer timer(Step::aia, url);
  auto body = http_fetch({url, "AIA server", {}, {}, proxy}, deadline);
  timer.finish(body.has_value(), body ? std::to_string(body->size()) + " bytes" : "failed");
  if (!body) return tl::unexpected(body.error());
  auto certs = parse_certificates(*body);
  if (!certs) {
    return fail(Errc::malformed_input,
                "the AIA server at " + url + " did not serve a certificate (DER, PEM or PKCS#7)");
  }
  return certs;
}

}  // namespace getcert::detail
