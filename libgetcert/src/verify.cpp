#include "getcert/verify.hpp"

#include <algorithm>
#include <ctime>

#include "detail/ossl.hpp"
#include "detail/trust_store.hpp"
#include "detail/x509_util.hpp"
#include "getcert/endpoint.hpp"

namespace getcert {
namespace {

using detail::X509Ptr;

struct RawProblem {
  int depth;
  int code;
  X509Ptr cert;  // the certificate OpenSSL was looking at; may be null
};

// Collects every problem instead of stopping at the first, so the user sees them all.
int collect_problem(int ok, X509_STORE_CTX* ctx) {
  if (ok == 1) return 1;
  auto* problems = static_cast<std::vector<RawProblem>*>(X509_STORE_CTX_get_app_data(ctx));
  const int code = X509_STORE_CTX_get_error(ctx);
  const int depth = X509_STORE_CTX_get_error_depth(ctx);
  const bool seen = std::any_of(problems->begin(), problems->end(), [&](const RawProblem& p) {
    return p.code == code && p.depth == depth;
  });
  if (!seen) {
    X509* cert = X509_STORE_CTX_get_current_cert(ctx);
    if (cert != nullptr) X509_up_ref(cert);
    problems->push_back({depth, code, X509Ptr(cert)});
  }
  return 1;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string days_phrase(std::int64_t seconds) {
  const std::int64_t days = seconds / 86400;
  if (days >= 2) return std::to_string(days) + " days";
  const std::int64_t hours = seconds / 3600;
  if (hours >= 2) return std::to_string(hours) + " hours";
  return std::to_string(seconds / 60) + " minutes";
}

bool name_in_presented(const std::string& name, const std::vector<Certificate>& presented) {
  return std::any_of(presented.begin(), presented.end(),
                     [&](const Certificate& c) { return c.subject == name; });
}

VerifyProblem describe(const RawProblem& raw, const std::vector<Certificate>& presented,
                       std::int64_t now) {
  VerifyProblem p;
  p.depth = raw.depth;
  Certificate cert;
  if (raw.cert) {
    if (auto parsed = detail::certificate_from_x509(raw.cert.get())) cert = std::move(*parsed);
  }
  const std::string who = quoted(cert.display_name());
  const std::string issuer = quoted(cert.issuer_cn.empty() ? cert.issuer : cert.issuer_cn);
  switch (raw.code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      p.code = "expired";
      p.reason = "certificate " + who + " expired " + days_phrase(now - cert.not_after) +
                 " ago (not after " + format_utc(cert.not_after) + ")";
      break;
    case X509_V_ERR_CERT_NOT_YET_VALID:
      p.code = "not_yet_valid";
      p.reason = "certificate " + who + " is not valid until " + format_utc(cert.not_before) +
                 " (in " + days_phrase(cert.not_before - now) + ")";
      break;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
      if (!name_in_presented(cert.issuer, presented) && !cert.is_ca) {
        p.code = "missing_intermediate";
        p.reason = "unable to get local issuer: server did not send intermediate " + issuer +
                   " and it is not in the trust store";
      } else {
        p.code = "unknown_issuer";
        p.reason = "unable to get local issuer: " + issuer +
                   " (issuer of " + who + ") is not in the trust store";
      }
      break;
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      p.code = "self_signed";
      p.reason = "self-signed certificate " + who + " is not in the trust store";
      break;
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      p.code = "untrusted_root";
      p.reason = "chain ends in root " + who + ", which is not in the trust store";
      break;
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      p.code = "bad_signature";
      p.reason = "signature on " + who + " does not verify with its issuer's key";
      break;
    case X509_V_ERR_INVALID_PURPOSE:
      p.code = "wrong_purpose";
      p.reason = "certificate " + who + " is not allowed for this purpose (extended key usage)";
      break;
    case X509_V_ERR_INVALID_CA:
      p.code = "invalid_ca";
      p.reason = "certificate " + who + " signs others but is not a valid CA";
      break;
    case X509_V_ERR_PATH_LENGTH_EXCEEDED:
      p.code = "path_length_exceeded";
      p.reason = "chain is longer than " + who + " allows (pathLenConstraint)";
      break;
    case X509_V_ERR_CERT_REVOKED:
      p.code = "revoked";
      p.reason = "certificate " + who + " has been revoked";
      break;
    case X509_V_ERR_EE_KEY_TOO_SMALL:
    case X509_V_ERR_CA_KEY_TOO_SMALL:
    case X509_V_ERR_CA_MD_TOO_WEAK:
      p.code = "too_weak";
      p.reason = "certificate " + who + ": " + X509_verify_cert_error_string(raw.code);
      break;
    default:
      p.code = "x509_error_" + std::to_string(raw.code);
      p.reason = std::string(X509_verify_cert_error_string(raw.code)) +
                 (raw.cert ? " (certificate " + who + ")" : "");
  }
  return p;
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// RFC 6125 matching, done apart from path building so a mismatch never hides chain problems.
std::optional<VerifyProblem> check_name(X509* leaf, const Certificate& model,
                                        const std::string& wanted) {
  std::string name = wanted;
  if (!name.empty() && name.back() == '.') name.pop_back();
  const bool ip = is_ip_literal(name);
  const int rc = ip ? X509_check_ip_asc(leaf, name.c_str(), 0)
                    : X509_check_host(leaf, name.data(), name.size(),
                                      X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, nullptr);
  if (rc == 1) return std::nullopt;
  VerifyProblem p;
  p.depth = 0;
  if (ip) {
    p.code = "ip_mismatch";
    p.reason = "IP mismatch: certificate is not valid for " + name +
               (model.sans.ip.empty() ? " (it has no IP address SANs"
                                      : " (its IP SANs are " + list_names(model.sans.ip)) +
               (model.sans.dns.empty() ? ")" : "; DNS names: " + list_names(model.sans.dns) + ")");
  } else {
    p.code = "hostname_mismatch";
    const std::string names =
        !model.sans.dns.empty() ? list_names(model.sans.dns)
        : !model.subject_cn.empty() ? model.subject_cn + " (CN)"
                                    : "no DNS name";
    p.reason = "name mismatch: certificate is for " + names + ", not " + name;
  }
  return p;
}

int openssl_purpose(Purpose purpose) {
  switch (purpose) {
    case Purpose::server: return X509_PURPOSE_SSL_SERVER;
    case Purpose::client: return X509_PURPOSE_SSL_CLIENT;
    case Purpose::any: return 0;
  }
  return 0;
}

}  // namespace

Result<Verification> verify_chain(const std::vector<Certificate>& presented,
                                  const VerifyOptions& options) {
  auto trust = detail::load_trust_store(options.trust);
  if (!trust) return tl::unexpected(trust.error());
  return detail::verify_with_store(presented, options, *trust);
}

namespace detail {

Result<Verification> verify_with_store(const std::vector<Certificate>& presented,
                                       const VerifyOptions& options, const TrustStore& trust) {
  if (presented.empty()) return fail(Errc::invalid_argument, "no certificate to verify");
  clear_errors();
  X509Ptr leaf = detail::x509_from_certificate(presented.front());
  detail::X509StackPtr untrusted(sk_X509_new_null());
  detail::X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!leaf || !untrusted || !ctx) {
    return fail(Errc::internal, "cannot prepare verification", detail::drain_errors());
  }
  for (std::size_t i = 1; i < presented.size(); ++i) {
    X509Ptr c = detail::x509_from_certificate(presented[i]);
    if (c && sk_X509_push(untrusted.get(), c.get()) > 0) (void)c.release();
  }

  if (X509_STORE_CTX_init(ctx.get(), trust.store.get(), leaf.get(), untrusted.get()) != 1) {
    return fail(Errc::internal, "cannot prepare verification", detail::drain_errors());
  }
  std::vector<RawProblem> raw;
  X509_STORE_CTX_set_app_data(ctx.get(), &raw);
  X509_STORE_CTX_set_verify_cb(ctx.get(), collect_problem);
  if (const int purpose = openssl_purpose(options.purpose); purpose != 0) {
    X509_STORE_CTX_set_purpose(ctx.get(), purpose);
  }
  const std::int64_t now = options.at_time.value_or(static_cast<std::int64_t>(std::time(nullptr)));
  if (options.at_time) {
    X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()),
                               static_cast<time_t>(*options.at_time));
  }
  const int rc = X509_verify_cert(ctx.get());
  if (rc < 0) return fail(Errc::internal, "verification could not run", detail::drain_errors());
  detail::clear_errors();

  Verification v;
  v.trust_store = trust.description;
  std::stable_sort(raw.begin(), raw.end(),
                   [](const RawProblem& a, const RawProblem& b) { return a.depth < b.depth; });
  for (const auto& r : raw) v.errors.push_back(describe(r, presented, now));
  v.trusted = rc == 1 && raw.empty();
  if (v.trusted) {
    STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx.get());
    for (int i = 0; i < sk_X509_num(chain); ++i) {
      auto c = detail::certificate_from_x509(sk_X509_value(chain, i));
      if (!c) return tl::unexpected(c.error());
      v.verified_chain.push_back(std::move(*c));
    }
  }

  v.hostname_ok = true;
  if (!options.name.empty()) {
    if (auto problem = check_name(leaf.get(), presented.front(), options.name)) {
      v.hostname_ok = false;
      v.errors.insert(v.errors.begin(), std::move(*problem));
    }
  }
  v.ok = v.trusted && v.hostname_ok;
  return v;
}

}  // namespace detail
}  // namespace getcert
