#include "detail/aia.hpp"
#include "detail/http.hpp"
#include "detail/ossl.hpp"
#include "detail/x509_util.hpp"

namespace getcert::detail {

Result<std::vector<Certificate>> download_issuers(const std::string& url,
                                                  std::chrono::milliseconds timeout) {
  auto body = http_get(url, timeout);
  if (!body) return tl::unexpected(body.error());
  auto certs = parse_certificates(*body);
  if (!certs) {
    return fail(Errc::malformed_input, url + " did not serve a certificate (DER, PEM or PKCS#7)");
  }
  return certs;
}

}  // namespace getcert::detail
