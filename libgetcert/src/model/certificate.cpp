#include "getcert/certificate.hpp"

#include <openssl/pem.h>

#include <array>
#include <cstring>
#include <ctime>

#include "internal/encoding.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"

namespace getcert {

std::string Certificate::pem() const {
  return internal::pem_encode<std::string>("CERTIFICATE", der.data(), der.size());
}

std::int64_t Certificate::days_left(std::int64_t now) const noexcept {
  const std::int64_t diff = not_after - now;
  // Round toward negative infinity so "expires in 0 days" means "today", -1 means expired.
  return diff >= 0 ? diff / 86400 : -((-diff + 86399) / 86400);
}

std::string Certificate::display_name() const { return subject_cn.empty() ? subject : subject_cn; }

Result<Certificate> parse_certificate_der(const std::vector<std::uint8_t>& der) {
  return internal::certificate_from_der(der);
}

Result<std::vector<Certificate>> parse_certificates_pem(const std::string& pem) {
  internal::clear_errors();
  internal::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<Certificate> out;
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long len = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) {
      const unsigned long err = ERR_peek_last_error();
      if (ERR_GET_REASON(err) == PEM_R_NO_START_LINE && ERR_GET_LIB(err) == ERR_LIB_PEM) {
        internal::clear_errors();
        break;
      }
      return fail(Errc::malformed_input, "corrupt PEM block", internal::drain_errors());
    }
    const internal::OpensslString owned_name(name);
    const internal::OpensslString owned_header(header);
    const internal::OpensslBytes owned_data(data);
    const std::string block_name = name;
    std::vector<std::uint8_t> der(data, data + len);
    if (block_name != "CERTIFICATE" && block_name != "X509 CERTIFICATE") continue;
    GETCERT_TRY_ASSIGN(auto cert, parse_certificate_der(der));
    out.push_back(std::move(cert));
  }
  if (out.empty()) return fail(Errc::malformed_input, "no PEM certificate found");
  return out;
}

std::string to_pem(const std::vector<Certificate>& chain) {
  std::string out;
  for (const auto& c : chain) out += c.pem();
  return out;
}

std::vector<Certificate> intermediates_only(const std::vector<Certificate>& issuers) {
  std::vector<Certificate> out;
  for (const auto& c : issuers) {
    if (!c.self_signed) out.push_back(c);
  }
  return out;
}

std::vector<Certificate> leaf_plus_intermediates(const Certificate& leaf,
                                                 const std::vector<Certificate>& issuers) {
  std::vector<Certificate> out{leaf};
  for (auto& c : intermediates_only(issuers)) out.push_back(std::move(c));
  return out;
}

std::string format_utc(std::int64_t epoch_seconds) {
  const auto t = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  if (std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return {};
  return buf.data();
}

std::string format_utc_ms(std::int64_t epoch_millis) {
  const std::int64_t millis = ((epoch_millis % 1000) + 1000) % 1000;
  std::string text = format_utc((epoch_millis - millis) / 1000);
  if (text.empty()) return text;
  std::string frac = ".";
  for (const std::int64_t unit : {100, 10, 1}) {
    frac += static_cast<char>('0' + (millis / unit) % 10);
  }
  text.insert(text.size() - 1, frac);
  return text;
}

}  // namespace getcert
