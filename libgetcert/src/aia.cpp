#include "detail/aia.hpp"
#include "detail/http.hpp"
#include "internal/ossl.hpp"
#include "internal/x509_util.hpp"

namespace getcert::detail {

Result<std::vector<Certificate>> download_issuers(const std::string& url,
                                                  Clock::time_point deadline,
                                                  const std::string& proxy) {
  auto body = http_fetch({url, "AIA server", {}, {}, proxy}, deadline);
  if (!body) return tl::unexpected(body.error());
  auto certs = parse_certificates(*body);
  if (!certs) {
    return fail(Errc::malformed_input,
                "the AIA server at " + url + " did not serve a certificate (DER, PEM or PKCS#7)");
  }
  return certs;
}

}  // namespace getcert::detail
