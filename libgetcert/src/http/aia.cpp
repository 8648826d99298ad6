#include "http/aia.hpp"

#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "http/http.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "net/timings.hpp"

namespace getcert::detail {
namespace {

using Bytes = std::vector<std::uint8_t>;

// The header of one BER element: single-byte tags only, which is all a PKCS#7 uses up to its
// certificates.
struct Header {
  std::uint8_t tag = 0;
  std::size_t size = 0;    // of the header itself
  std::size_t length = 0;  // of the content; unused when indefinite
  bool indefinite = false;
};

std::optional<Header> read_header(const std::uint8_t* p, std::size_t n) {
  if (n < 2 || (p[0] & 0x1F) == 0x1F) return std::nullopt;
  Header h;
  h.tag = p[0];
  const std::uint8_t first = p[1];
  if (first < 0x80) {
    h.size = 2;
    h.length = first;
  } else if (first == 0x80) {
    if ((h.tag & 0x20) == 0) return std::nullopt;  // indefinite needs a constructed element
    h.size = 2;
    h.indefinite = true;
    return h;
  } else {
    const std::size_t octets = first & 0x7FU;
    if (octets > 4 || n < 2 + octets) return std::nullopt;  // bodies are capped at 10 MiB
    for (std::size_t i = 0; i < octets; ++i) h.length = (h.length << 8) | p[2 + i];
    h.size = 2 + octets;
  }
  if (h.length > n - h.size) return std::nullopt;
  return h;
}

// The whole size of the element at p (header, content and, for an indefinite length, the
// end-of-contents octets), or nullopt when it does not fit in n bytes or nests too deep.
std::optional<std::size_t> element_size(const std::uint8_t* p, std::size_t n, int depth = 0) {
  const auto h = read_header(p, n);
  if (!h || depth > 16) return std::nullopt;
  if (!h->indefinite) return h->size + h->length;
  std::size_t at = h->size;
  while (at + 2 <= n) {
    if (p[at] == 0 && p[at + 1] == 0) return at + 2;
    const auto child = element_size(p + at, n - at, depth + 1);
    if (!child) return std::nullopt;
    at += *child;
  }
  return std::nullopt;
}

// A cursor over the elements of one constructed element's content.
class Elements {
 public:
  Elements(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}

  // The content of the element at p, whose header is `h` (an indefinite one runs to the end of
  // what encloses it; its elements stop at the end-of-contents octets).
  static Elements inside(const std::uint8_t* p, std::size_t n, const Header& h) {
    return {p + h.size, h.indefinite ? n - h.size : h.length};
  }

  bool at_end() const { return n_ < 2 || (p_[0] == 0 && p_[1] == 0); }
  std::optional<Header> peek() const { return at_end() ? std::nullopt : read_header(p_, n_); }
  const std::uint8_t* data() const { return p_; }
  std::size_t left() const { return n_; }

  // Steps past the next element; its size, or nullopt when it is malformed.
  std::optional<std::size_t> skip() {
    const auto size = element_size(p_, n_);
    if (!size) return std::nullopt;
    p_ += *size;
    n_ -= *size;
    return size;
  }

  // Enters the next element when it has `tag`.
  std::optional<Elements> enter(std::uint8_t tag) const {
    const auto h = peek();
    if (!h || h->tag != tag) return std::nullopt;
    return inside(p_, n_, *h);
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

// 1.2.840.113549.1.7.2, pkcs7-signedData, as its DER content octets.
constexpr std::array<std::uint8_t, 9> kSignedDataOid = {0x2A, 0x86, 0x48, 0x86, 0xF7,
                                                        0x0D, 0x01, 0x07, 0x02};

class AiaDecoder {
 public:
  AiaDecoder(std::string url, Clock::time_point deadline, std::chrono::milliseconds budget)
      : url_(std::move(url)), deadline_(deadline), budget_(budget) {}

  // Decodes one DER certificate, when the count and the deadline allow it.
  Result<void> add(const std::uint8_t* der, std::size_t size) {
    if (auto ok = check_time(); !ok) return ok;
    if (certs_.size() == kMaxAiaCertificates) {
      return fail(Errc::limit_exceeded, "the AIA server at " + url_ + " sent more than " +
                                            std::to_string(kMaxAiaCertificates) +
                                            " certificates (getcert's limit for one answer)");
    }
    auto cert = internal::certificate_from_der(Bytes(der, der + size));
    if (!cert) return tl::unexpected(not_certificates());
    certs_.push_back(std::move(*cert));
    return {};
  }

  // The certificates of a DER PKCS#7 SignedData, one element at a time. False when `der` is
  // not one (so the caller may try another form).
  Result<bool> add_pkcs7(const std::uint8_t* der, std::size_t size) {
    const Elements whole(der, size);
    auto info = whole.enter(0x30);  // ContentInfo
    if (!info) return false;
    const auto oid = info->peek();
    if (!oid || oid->tag != 0x06 || oid->length != kSignedDataOid.size() ||
        !std::equal(kSignedDataOid.begin(), kSignedDataOid.end(), info->data() + oid->size)) {
      return false;
    }
    info->skip();
    auto explicit0 = info->enter(0xA0);
    if (!explicit0) return tl::unexpected(not_certificates());
    auto signed_data = explicit0->enter(0x30);
    // version, digestAlgorithms, contentInfo
    if (!signed_data || !signed_data->skip() || !signed_data->skip() || !signed_data->skip()) {
      return tl::unexpected(not_certificates());
    }
    auto certificates = signed_data->enter(0xA0);  // [0] IMPLICIT SET OF CertificateChoices
    if (!certificates) return true;                // a PKCS#7 without certificates
    while (!certificates->at_end()) {
      const auto h = certificates->peek();
      const auto* start = certificates->data();
      const auto element = certificates->skip();
      if (!h || !element) return tl::unexpected(not_certificates());
      // Only plain certificates (SEQUENCE); attribute and other certificates are no issuers.
      if (h->tag != 0x30) continue;
      GETCERT_TRY(add(start, *element));
    }
    return true;
  }

  // Every CERTIFICATE and PKCS7 block of a PEM text, one block at a time.
  Result<void> add_pem(const Bytes& text) {
    internal::clear_errors();
    internal::BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    for (;;) {
      if (auto ok = check_time(); !ok) return ok;
      char* name = nullptr;
      char* header = nullptr;
      unsigned char* data = nullptr;
      long len = 0;
      if (PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) {
        const unsigned long err = ERR_peek_last_error();
        internal::clear_errors();
        if (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE) break;
        return tl::unexpected(not_certificates());
      }
      const internal::OpensslString owned_name(name);
      const internal::OpensslString owned_header(header);
      const internal::OpensslBytes owned_data(data);
      const std::string block = name;
      const auto size = static_cast<std::size_t>(len);
      if (block == "CERTIFICATE" || block == "X509 CERTIFICATE") {
        if (auto ok = add(data, size); !ok) return ok;
      } else if (block == "PKCS7") {
        GETCERT_TRY_ASSIGN(auto was, add_pkcs7(data, size));
        if (!was) return tl::unexpected(not_certificates());
      }
    }
    return {};
  }

  Result<std::vector<Certificate>> finish() {
    if (certs_.empty()) return tl::unexpected(not_certificates());
    return std::move(certs_);
  }

  Error not_certificates() const {
    return {Errc::malformed_input,
            "the AIA server at " + url_ + " did not serve a certificate (DER, PEM or PKCS#7)"};
  }

 private:
  Result<void> check_time() const {
    if (Clock::now() < deadline_) return {};
    return fail(Errc::timeout, "the AIA server at " + url_ + " timed out after " +
                                   duration_text(budget_) + ": the deadline passed while " +
                                   std::to_string(certs_.size()) +
                                   " of its certificates were decoded");
  }

  std::string url_;
  Clock::time_point deadline_;
  std::chrono::milliseconds budget_;
  std::vector<Certificate> certs_;
};

}  // namespace

Result<std::vector<Certificate>> decode_aia_answer(const Bytes& body, const std::string& url,
                                                   Clock::time_point deadline,
                                                   std::chrono::milliseconds budget) {
  AiaDecoder decoder(url, deadline, budget);
  if (body.empty()) return tl::unexpected(decoder.not_certificates());
  // DER: one certificate, else a PKCS#7. A DER certificate that does not parse may still be
  // PEM text that starts with a byte 0x30 ('0'), so only a recognised PKCS#7 ends the search.
  if (body.front() == 0x30) {
    GETCERT_TRY_ASSIGN(auto pkcs7, decoder.add_pkcs7(body.data(), body.size()));
    if (pkcs7) return decoder.finish();
    if (const auto whole = element_size(body.data(), body.size()); whole == body.size()) {
      if (auto one = decoder.add(body.data(), body.size()); !one) {
        if (one.error().code != Errc::malformed_input) return tl::unexpected(one.error());
      } else {
        return decoder.finish();
      }
    }
  }
  const std::string_view text(reinterpret_cast<const char*>(body.data()), body.size());
  if (text.find("-----BEGIN") == std::string_view::npos) {
    return tl::unexpected(decoder.not_certificates());
  }
  GETCERT_TRY(decoder.add_pem(body));
  return decoder.finish();
}

Result<std::vector<Certificate>> download_issuers(const std::string& url,
                                                  Clock::time_point deadline,
                                                  const std::string& proxy,
                                                  const DownloadPolicy& policy) {
  const auto budget =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  StepTimer timer(Step::aia, url);
  auto body = http_fetch({url, "AIA server", {}, {}, proxy, policy}, deadline);
  timer.finish(body.has_value(), body ? std::to_string(body->size()) + " bytes" : "failed");
  if (!body) return tl::unexpected(body.error());
  return decode_aia_answer(*body, url, deadline, budget);
}

}  // namespace getcert::detail
