#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

#include <optional>
#include <string>

#include "http/http.hpp"
#include "internal/ossl.hpp"
#include "internal/x509_util.hpp"
#include "net/dial.hpp"
#include "net/timings.hpp"
#include "verify/revocation.hpp"

namespace getcert::detail {
namespace {

constexpr long kClockSkewSeconds = 300;

// What is left of the shared budget; requests after it is spent fail at once.
std::chrono::milliseconds remaining(const RevocationContext& ctx) {
  return std::chrono::milliseconds(millis_until(ctx.deadline));
}

RevocationCheck failed(RevocationCheck r, std::string detail) {
  r.status = RevocationStatus::error;
  r.detail = std::move(detail);
  return r;
}

std::vector<std::string> crl_urls(X509* cert) {
  std::vector<std::string> urls;
  internal::CrlDistPointsPtr points(static_cast<CRL_DIST_POINTS*>(
      X509_get_ext_d2i(cert, NID_crl_distribution_points, nullptr, nullptr)));
  if (!points) return urls;
  for (int i = 0; i < sk_DIST_POINT_num(points.get()); ++i) {
    const DIST_POINT* dp = sk_DIST_POINT_value(points.get(), i);
    if (dp->distpoint == nullptr || dp->distpoint->type != 0) continue;
    const GENERAL_NAMES* names = dp->distpoint->name.fullname;
    for (int j = 0; j < sk_GENERAL_NAME_num(names); ++j) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names, j);
      if (gn->type == GEN_URI) {
        const ASN1_STRING* s = gn->d.uniformResourceIdentifier;
        urls.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                          static_cast<std::size_t>(ASN1_STRING_length(s)));
      }
    }
  }
  return urls;
}

std::string reason_text(int reason) {
  if (reason < 0) return {};
  return OCSP_crl_reason_str(reason);
}

RevocationCheck check_crl(int depth, const std::string& url, const RevocationContext& ctx,
                          Clock::time_point request_deadline) {
  RevocationCheck r;
  r.depth = depth;
  r.source = RevocationSource::crl;
  r.url = url;
  if (remaining(ctx).count() == 0) return failed(r, "no time left for the CRL (--timeout)");
  StepTimer timer(Step::crl, url);
  auto body = http_fetch({url, "CRL server", {}, {}, ctx.proxy, ctx.policy}, request_deadline);
  timer.finish(body.has_value(), body ? std::to_string(body->size()) + " bytes" : "failed");
  if (!body) return failed(r, body.error().message);
  return check_crl_bytes(*body, depth, url, ctx);
}

}  // namespace

RevocationCheck check_crl_bytes(const std::vector<std::uint8_t>& body, int depth,
                                const std::string& url, const RevocationContext& ctx) {
  RevocationCheck r;
  r.depth = depth;
  r.source = RevocationSource::crl;
  r.url = url;
  internal::clear_errors();
  const unsigned char* p = body.data();
  internal::X509CrlPtr crl(d2i_X509_CRL(nullptr, &p, static_cast<long>(body.size())));
  if (!crl) {
    internal::BioPtr mem(BIO_new_mem_buf(body.data(), static_cast<int>(body.size())));
    crl.reset(PEM_read_bio_X509_CRL(mem.get(), nullptr, nullptr, nullptr));
  }
  internal::clear_errors();
  if (!crl) return failed(r, "the CRL at " + url + " is not a valid CRL (DER or PEM)");

  X509* cert = sk_X509_value(ctx.chain, depth);
  X509* issuer = sk_X509_value(ctx.chain, depth + 1);
  if (X509_NAME_cmp(X509_CRL_get_issuer(crl.get()), X509_get_subject_name(issuer)) != 0) {
    return failed(
        r, "the CRL at " + url + " was issued by someone else than the certificate's issuer");
  }
  if (X509_CRL_verify(crl.get(), X509_get0_pubkey(issuer)) != 1) {
    internal::clear_errors();
    return failed(r, "the CRL at " + url + " has a signature that does not verify");
  }
  r.produced_at = internal::asn1_time_to_epoch(X509_CRL_get0_lastUpdate(crl.get()));
  r.this_update = r.produced_at;
  if (const ASN1_TIME* next = X509_CRL_get0_nextUpdate(crl.get()); next != nullptr) {
    r.next_update = internal::asn1_time_to_epoch(next);
    if (*r.next_update + kClockSkewSeconds < ctx.now) {
      return failed(r, "the CRL at " + url + " is stale (next update was " +
                           format_utc(*r.next_update) + ")");
    }
  }
  X509_REVOKED* revoked = nullptr;  // get0
  if (X509_CRL_get0_by_cert(crl.get(), &revoked, cert) == 1 && revoked != nullptr) {
    r.status = RevocationStatus::revoked;
    r.revoked_at = internal::asn1_time_to_epoch(X509_REVOKED_get0_revocationDate(revoked));
    int crit = 0;
    const internal::Asn1EnumeratedPtr reason(static_cast<ASN1_ENUMERATED*>(
        X509_REVOKED_get_ext_d2i(revoked, NID_crl_reason, &crit, nullptr)));
    if (reason) r.detail = reason_text(static_cast<int>(ASN1_ENUMERATED_get(reason.get())));
    return r;
  }
  r.status = RevocationStatus::good;
  return r;
}

// Whether `basic` is signed by `issuer`, or by a responder `issuer` delegated to (RFC 6960
// 4.2.2.2: issued directly by it, with id-kp-OCSPSigning, valid at ctx.now); the reason if not.
// The issuer's own standing is settled: it is on the verified chain. OpenSSL's own check
// (OCSP_basic_verify without OCSP_NOVERIFY) would build the signer's chain again against the
// trust store at the wall clock, which refuses a staple when the anchor is an intermediate
// (--ca-file intermediate.pem) and ignores --at.
std::optional<std::string> check_ocsp_signer(OCSP_BASICRESP* basic, X509* issuer,
                                             const RevocationContext& ctx) {
  X509* signer = nullptr;  // get0
  if (OCSP_resp_get0_signer(basic, &signer, ctx.chain) != 1 || signer == nullptr) {
    internal::clear_errors();
    return "the OCSP response's signer is neither the issuer nor a certificate it includes";
  }
  // OCSP_NOVERIFY: the signature with the signer's key only; the signer is judged below.
  if (OCSP_basic_verify(basic, ctx.chain, nullptr, OCSP_NOVERIFY) <= 0) {
    const std::string why = internal::drain_errors();
    return "the OCSP response's signature does not verify" +
           (why.empty() ? std::string() : " (" + why + ")");
  }
  if (X509_cmp(signer, issuer) == 0) return std::nullopt;
  EVP_PKEY* issuer_key = X509_get0_pubkey(issuer);
  if (X509_check_issued(issuer, signer) != X509_V_OK || issuer_key == nullptr ||
      X509_verify(signer, issuer_key) != 1) {
    internal::clear_errors();
    return "the OCSP response is signed by '" +
           internal::name_to_string(X509_get_subject_name(signer)) +
           "', which the certificate's issuer did not issue";
  }
  if ((X509_get_extension_flags(signer) & EXFLAG_XKUSAGE) == 0 ||
      (X509_get_extended_key_usage(signer) & XKU_OCSP_SIGN) == 0) {
    return "the OCSP response is signed by '" +
           internal::name_to_string(X509_get_subject_name(signer)) +
           "', which is not authorised for OCSP signing (no id-kp-OCSPSigning)";
  }
  const std::int64_t not_before = internal::asn1_time_to_epoch(X509_get0_notBefore(signer));
  const std::int64_t not_after = internal::asn1_time_to_epoch(X509_get0_notAfter(signer));
  if (not_before > ctx.now + kClockSkewSeconds || not_after + kClockSkewSeconds < ctx.now) {
    return "the OCSP response's signer '" +
           internal::name_to_string(X509_get_subject_name(signer)) +
           "' is not within its validity period";
  }
  return std::nullopt;
}

RevocationCheck check_ocsp_response(const std::vector<std::uint8_t>& der, int depth,
                                    const RevocationContext& ctx, RevocationSource source,
                                    const std::string& url) {
  RevocationCheck r;
  r.depth = depth;
  r.source = source;
  r.url = url;
  internal::clear_errors();
  const unsigned char* p = der.data();
  internal::OcspResponsePtr resp(d2i_OCSP_RESPONSE(nullptr, &p, static_cast<long>(der.size())));
  if (!resp) return failed(r, "the OCSP response is not valid DER");
  const int rs = OCSP_response_status(resp.get());
  if (rs != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
    return failed(
        r, std::string("the OCSP responder answered '") + OCSP_response_status_str(rs) + "'");
  }
  internal::OcspBasicRespPtr basic(OCSP_response_get1_basic(resp.get()));
  if (!basic) return failed(r, "the OCSP response has no basic response");
  if (const ASN1_GENERALIZEDTIME* produced = OCSP_resp_get0_produced_at(basic.get())) {
    r.produced_at = internal::asn1_time_to_epoch(produced);
  }
  X509* cert = sk_X509_value(ctx.chain, depth);
  X509* issuer = sk_X509_value(ctx.chain, depth + 1);
  if (auto why = check_ocsp_signer(basic.get(), issuer, ctx)) return failed(r, *why);
  internal::OcspCertIdPtr id(OCSP_cert_to_id(nullptr, cert, issuer));
  int status = -1;
  int reason = -1;
  ASN1_GENERALIZEDTIME* revoked_at = nullptr;  // get0 (borrowed from basic)
  ASN1_GENERALIZEDTIME* this_update = nullptr;
  ASN1_GENERALIZEDTIME* next_update = nullptr;
  if (!id || OCSP_resp_find_status(basic.get(), id.get(), &status, &reason, &revoked_at,
                                   &this_update, &next_update) != 1) {
    internal::clear_errors();
    return failed(r, "the OCSP response does not cover this certificate");
  }
  if (this_update != nullptr) r.this_update = internal::asn1_time_to_epoch(this_update);
  if (next_update != nullptr) r.next_update = internal::asn1_time_to_epoch(next_update);
  // Judged at the verification time (--at), like the chain and CRLs, not at the wall clock.
  if (!r.this_update || *r.this_update > ctx.now + kClockSkewSeconds) {
    return failed(r, "the OCSP response is not valid yet (thisUpdate " +
                         (r.this_update ? format_utc(*r.this_update) : std::string("missing")) +
                         ")");
  }
  if (r.next_update && *r.next_update + kClockSkewSeconds < ctx.now) {
    return failed(r,
                  "the OCSP response is stale (nextUpdate was " + format_utc(*r.next_update) + ")");
  }
  switch (status) {
    case V_OCSP_CERTSTATUS_GOOD:
      r.status = RevocationStatus::good;
      break;
    case V_OCSP_CERTSTATUS_REVOKED:
      r.status = RevocationStatus::revoked;
      if (revoked_at != nullptr) r.revoked_at = internal::asn1_time_to_epoch(revoked_at);
      r.detail = reason_text(reason);
      break;
    default:
      r.status = RevocationStatus::unknown;
      r.detail = "the responder does not know this certificate";
  }
  return r;
}

RevocationCheck check_online(int depth, const RevocationContext& ctx) {
  X509* cert = sk_X509_value(ctx.chain, depth);
  X509* issuer = sk_X509_value(ctx.chain, depth + 1);
  auto model = internal::certificate_from_x509(cert);
  RevocationCheck last;
  last.depth = depth;
  last.source = RevocationSource::none;
  last.status = RevocationStatus::none;
  last.detail = "the certificate names no OCSP responder and no CRL distribution point";
  const auto crls = crl_urls(cert);
  std::size_t planned = crls.size() + (model ? model->ocsp_urls.size() : 0);
  if (model) {
    for (const auto& url : model->ocsp_urls) {
      internal::clear_errors();
      internal::OcspRequestPtr req(OCSP_REQUEST_new());
      internal::OcspCertIdPtr id(OCSP_cert_to_id(nullptr, cert, issuer));
      if (!req || !id || OCSP_request_add0_id(req.get(), id.get()) == nullptr) continue;
      (void)id.release();  // owned by req now
      unsigned char* der = nullptr;
      const int len = i2d_OCSP_REQUEST(req.get(), &der);
      const internal::OpensslBytes owned(der);
      if (len <= 0) continue;
      const std::vector<std::uint8_t> body(der, der + len);
      if (remaining(ctx).count() == 0) {
        last = failed(
            RevocationCheck{
                depth, RevocationSource::ocsp, url, RevocationStatus::error, "", {}, {}, {}, {}},
            "no time left for OCSP (--timeout)");
        break;
      }
      StepTimer timer(Step::ocsp, url);
      auto answer = http_fetch(
          {url, "OCSP responder", "application/ocsp-request", body, ctx.proxy, ctx.policy},
          share_of(ctx.deadline, planned--));
      timer.finish(answer.has_value(),
                   answer ? std::to_string(answer->size()) + " bytes" : "failed");
      RevocationCheck r =
          answer ? check_ocsp_response(*answer, depth, ctx, RevocationSource::ocsp, url)
                 : failed(RevocationCheck{depth,
                                          RevocationSource::ocsp,
                                          url,
                                          RevocationStatus::error,
                                          "",
                                          {},
                                          {},
                                          {},
                                          {}},
                          answer.error().message);
      if (r.status != RevocationStatus::error) return r;
      last = r;
    }
  }
  // When the CRL fails too, the responder's failure is kept: each party is named for its part.
  const std::string ocsp_failure =
      last.source == RevocationSource::ocsp ? last.detail : std::string();
  for (const auto& url : crls) {
    RevocationCheck r = check_crl(depth, url, ctx, share_of(ctx.deadline, planned--));
    if (r.status != RevocationStatus::error) return r;
    last = r;
  }
  if (last.source == RevocationSource::crl && !ocsp_failure.empty()) {
    last.detail += "; OCSP failed first: " + ocsp_failure;
  }
  return last;
}

}  // namespace getcert::detail
