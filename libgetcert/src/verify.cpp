#include "getcert/verify.hpp"

#include <algorithm>
#include <ctime>

#include "detail/aia.hpp"
#include "detail/dial.hpp"
#include "detail/ossl.hpp"
#include "detail/revocation.hpp"
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
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      if (!name_in_presented(cert.issuer, presented) && !cert.is_ca) {
        p.code = "missing_intermediate";
        p.reason = "unable to get local issuer: server did not send intermediate " + issuer +
                   " and it is not in the trust store";
      } else {
        p.code = "unknown_issuer";
        p.reason = "unable to get local issuer: " + issuer + " (issuer of " + who +
                   ") is not in the trust store";
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
  const bool ip = is_ip_literal(name);
  if (!ip) {
    // A pattern such as "*.example.com" is not a name a client connects to: never a match.
    auto normalized = normalize_hostname(name);
    if (!normalized) {
      return VerifyProblem{0, "hostname_mismatch",
                           "'" + wanted + "' is not a host name a certificate can be checked for"};
    }
    name = std::move(*normalized);
  }
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
    const bool has_sans = !model.sans.dns.empty() || !model.sans.ip.empty() ||
                          !model.sans.uri.empty() || !model.sans.email.empty();
    if (!model.sans.dns.empty()) {
      p.reason =
          "name mismatch: certificate is for " + list_names(model.sans.dns) + ", not " + name;
    } else if (has_sans) {
      // With SANs present the CN is never a name (RFC 6125), so do not cite it as one.
      p.reason =
          "name mismatch: certificate has no DNS names" +
          (model.sans.ip.empty() ? std::string()
                                 : " (only IP addresses: " + list_names(model.sans.ip) + ")") +
          ", so it is not valid for " + name;
    } else {
      p.reason = "name mismatch: certificate is for " +
                 (model.subject_cn.empty() ? std::string("no name") : model.subject_cn + " (CN)") +
                 ", not " + name;
    }
  }
  return p;
}

int openssl_purpose(Purpose purpose) {
  switch (purpose) {
    case Purpose::server:
      return X509_PURPOSE_SSL_SERVER;
    case Purpose::client:
      return X509_PURPOSE_SSL_CLIENT;
    case Purpose::any:
      return 0;
  }
  return 0;
}

struct PathResult {
  std::vector<RawProblem> problems;
  detail::X509StackPtr chain;  // what OpenSSL built, leaf first (complete or not)
  bool ran = false;
};

Result<PathResult> build_path(X509* leaf, STACK_OF(X509) * untrusted, const VerifyOptions& options,
                              X509_STORE* store) {
  detail::clear_errors();
  detail::X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx) return fail(Errc::internal, "out of memory", detail::drain_errors());
  if (X509_STORE_CTX_init(ctx.get(), store, leaf, untrusted) != 1) {
    return fail(Errc::internal, "cannot prepare verification", detail::drain_errors());
  }
  PathResult out;
  X509_STORE_CTX_set_app_data(ctx.get(), &out.problems);
  X509_STORE_CTX_set_verify_cb(ctx.get(), collect_problem);
  if (const int purpose = openssl_purpose(options.purpose); purpose != 0) {
    X509_STORE_CTX_set_purpose(ctx.get(), purpose);
  }
  if (options.at_time) {
    X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()),
                               static_cast<time_t>(*options.at_time));
  }
  const int rc = X509_verify_cert(ctx.get());
  if (rc < 0) return fail(Errc::internal, "verification could not run", detail::drain_errors());
  detail::clear_errors();
  out.ran = rc == 1;
  out.chain.reset(X509_STORE_CTX_get1_chain(ctx.get()));
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const RawProblem& a, const RawProblem& b) { return a.depth < b.depth; });
  return out;
}

bool is_issuer_problem(int code) {
  return code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
         code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
         code == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
}

bool same_certificate(const Certificate& a, const Certificate& b) {
  return a.subject == b.subject && a.spki_sha256 == b.spki_sha256;
}

// Downloads missing issuers by following CA Issuers URLs upward from where the path broke.
// `gap_url` becomes the URL the gap's own issuer came from, or the last one that failed for it.
std::vector<Certificate> fetch_missing_issuers(const PathResult& path,
                                               detail::Clock::time_point deadline,
                                               bool revocation_planned,
                                               std::vector<std::string>& notes,
                                               std::string& gap_url) {
  std::vector<Certificate> fetched;
  constexpr int kMaxDownloads = 4;
  const int top = sk_X509_num(path.chain.get()) - 1;
  auto start = detail::certificate_from_x509(sk_X509_value(path.chain.get(), top));
  if (!start) return fetched;
  Certificate current = std::move(*start);
  for (int i = 0; i < kMaxDownloads && !current.self_signed; ++i) {
    if (current.ca_issuers_urls.empty()) {
      notes.push_back("'" + current.display_name() + "' names no CA Issuers URL to fetch from");
      break;
    }
    std::optional<Certificate> issuer;
    std::size_t urls_left = current.ca_issuers_urls.size();
    for (const auto& url : current.ca_issuers_urls) {
      if (i == 0) gap_url = url;
      if (detail::millis_until(deadline) == 0) {
        notes.push_back("no time left to fetch the issuer of '" + current.display_name() + "'");
        break;
      }
      // The revocation checks that follow a completed chain keep a share of the budget.
      auto got = detail::download_issuers(
          url, detail::share_of(deadline, urls_left-- + (revocation_planned ? 1 : 0)));
      if (!got) {
        notes.push_back("fetching the issuer of '" + current.display_name() +
                        "' failed: " + got.error().message);
        continue;
      }
      for (auto& c : *got) {
        if (c.subject == current.issuer && !issuer) issuer = c;
        fetched.push_back(std::move(c));
      }
      if (issuer) break;
    }
    if (!issuer) break;
    current = std::move(*issuer);
  }
  return fetched;
}

VerifyProblem missing_intermediate(int depth, const Certificate& child, bool completed,
                                   bool fetch_tried, const std::string& fetched_from) {
  VerifyProblem p;
  p.depth = depth;
  p.code = "missing_intermediate";
  const std::string issuer = "'" + (child.issuer_cn.empty() ? child.issuer : child.issuer_cn) + "'";
  // Name the URL that was actually used (or failed), not merely the first one listed.
  const std::string url = !fetched_from.empty()           ? fetched_from
                          : child.ca_issuers_urls.empty() ? std::string()
                                                          : child.ca_issuers_urls.front();
  p.reason = "server did not send the intermediate " + issuer;
  if (completed) {
    p.reason += "; it was fetched from " + url +
                ", as browsers do, but most non-browser clients (gRPC, curl, OpenSSL) will fail";
  } else if (!url.empty()) {
    p.reason += "; browsers will fetch it from " + url + ", most non-browser clients will fail" +
                (fetch_tried ? "" : " (fetching missing intermediates would complete the chain)");
  } else {
    p.reason += " and it is not in the trust store";
  }
  return p;
}

bool pin_matches(const std::vector<std::string>& pins, const std::vector<Certificate>& certs) {
  for (const auto& c : certs) {
    for (const auto& pin : pins) {
      if (pin == "sha256/" + c.spki_sha256) return true;
    }
  }
  return false;
}

void check_revocation_evidence(Verification& v, const VerifyOptions& options, X509_STORE* store,
                               STACK_OF(X509) * chain, std::int64_t now,
                               detail::Clock::time_point network_deadline) {
  const int n = sk_X509_num(chain);
  if (n < 2) return;
  detail::RevocationContext ctx{store, chain, now, network_deadline};
  if (!options.ocsp_staple.empty()) {
    v.revocation.push_back(
        detail::check_ocsp_response(options.ocsp_staple, 0, ctx, "ocsp-staple", ""));
  }
  if (options.check_revocation) {
    for (int depth = 0; depth + 1 < n; ++depth) {
      // Each certificate's sources share what is left with the certificates still to check.
      ctx.deadline = detail::share_of(network_deadline, static_cast<std::size_t>(n - 1 - depth));
      v.revocation.push_back(detail::check_online(depth, ctx));
    }
  }
  for (const auto& r : v.revocation) {
    const std::string who = "certificate at depth " + std::to_string(r.depth);
    const std::string via = r.source == "ocsp-staple" ? "the stapled OCSP response"
                            : r.source == "ocsp"      ? "OCSP (" + r.url + ")"
                            : r.source == "crl"       ? "the CRL (" + r.url + ")"
                                                      : "revocation check";
    if (r.status == "revoked") {
      v.errors.push_back({r.depth, "revoked",
                          who + " is revoked according to " + via +
                              (r.revoked_at ? " since " + format_utc(*r.revoked_at) : "") +
                              (r.detail.empty() ? "" : " (reason: " + r.detail + ")")});
    } else if (r.status == "error" && r.source == "ocsp-staple") {
      v.errors.push_back(
          {r.depth, "bad_ocsp_staple", "stapled OCSP response rejected: " + r.detail});
    } else if (r.status == "none" && r.depth > 0) {
      // Many CAs publish no revocation source for their intermediates: nothing to ask, and
      // not the server's fault. It stays visible in the JSON report.
      continue;
    } else if (r.status == "error" || r.status == "unknown" || r.status == "none") {
      const std::string text = via + " for " + who + ": " + r.detail;
      if (options.require_revocation) {
        v.errors.push_back({r.depth, "revocation_unavailable", text + " (--require-revocation)"});
      } else {
        v.warnings.push_back(text);
      }
    }
  }
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
                                       const VerifyOptions& options, const TrustStore& trust,
                                       const std::vector<X509*>& parsed) {
  if (presented.empty()) return fail(Errc::invalid_argument, "no certificate to verify");
  // One parsed handle per certificate for the whole verification: OpenSSL decodes a public
  // key lazily per handle, and that decode dominates the cost of verifying.
  std::vector<X509Ptr> handles;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    X509* given = i < parsed.size() ? parsed[i] : nullptr;
    if (given != nullptr) X509_up_ref(given);
    X509Ptr h(given != nullptr ? given : x509_from_certificate(presented[i]).release());
    if (!h) return fail(Errc::internal, "cannot re-read a presented certificate");
    handles.push_back(std::move(h));
  }
  X509* leaf = handles.front().get();
  X509RefStackPtr untrusted(sk_X509_new_null());  // borrows from handles
  if (!untrusted) return fail(Errc::internal, "out of memory");
  for (std::size_t i = 1; i < handles.size(); ++i) sk_X509_push(untrusted.get(), handles[i].get());
  const std::int64_t now = options.at_time.value_or(static_cast<std::int64_t>(std::time(nullptr)));

  // One budget for every HTTP request verification makes (AIA, OCSP, CRL).
  const auto network_deadline = detail::Clock::now() + options.network_timeout;
  auto path = build_path(leaf, untrusted.get(), options, trust.store.get());
  if (!path) return tl::unexpected(path.error());

  Verification v;
  v.trust_store = trust.description;

  // Where the server left a gap, say so plainly; optionally complete it as a browser would.
  const auto gap =
      std::find_if(path->problems.begin(), path->problems.end(), [&](const RawProblem& p) {
        if (!is_issuer_problem(p.code) || !p.cert) return false;
        auto c = certificate_from_x509(p.cert.get());
        return c && !c->self_signed && !name_in_presented(c->issuer, presented) &&
               !c->ca_issuers_urls.empty();
      });
  bool completed = false;
  std::optional<VerifyProblem> gap_problem;
  if (gap != path->problems.end()) {
    const int gap_depth = gap->depth;
    auto child = certificate_from_x509(gap->cert.get());
    if (!child) return tl::unexpected(child.error());
    std::vector<std::string> notes;
    std::string gap_url;
    if (options.fetch_missing) {
      v.fetched_intermediates =
          fetch_missing_issuers(*path, network_deadline, options.check_revocation, notes, gap_url);
      if (!v.fetched_intermediates.empty()) {
        for (const auto& c : v.fetched_intermediates) {
          X509Ptr h = x509_from_certificate(c);
          if (h && sk_X509_push(untrusted.get(), h.get()) > 0) handles.push_back(std::move(h));
        }
        auto again = build_path(leaf, untrusted.get(), options, trust.store.get());
        if (!again) return tl::unexpected(again.error());
        completed = std::none_of(again->problems.begin(), again->problems.end(),
                                 [](const RawProblem& p) { return is_issuer_problem(p.code); });
        if (completed) path = std::move(again);
      }
    }
    gap_problem =
        missing_intermediate(gap_depth, *child, completed, options.fetch_missing, gap_url);
    // Notes explain a failed completion; after a success they are noise.
    if (!completed) {
      for (auto& n : notes) v.warnings.push_back(std::move(n));
    }
  }

  for (const auto& r : path->problems) {
    if (gap_problem && is_issuer_problem(r.code)) continue;
    v.errors.push_back(describe(r, presented, now));
  }
  if (gap_problem) v.errors.insert(v.errors.begin(), *gap_problem);
  // A gap completed from the AIA URL still counts as a path to a trust anchor.
  v.trusted = path->ran && v.errors.size() == (completed ? 1U : 0U);

  std::size_t from_store = 0;  // intermediates only the local store supplied
  if (v.trusted) {
    STACK_OF(X509)* chain = path->chain.get();
    for (int i = 0; i < sk_X509_num(chain); ++i) {
      X509* link = sk_X509_value(chain, i);
      // Certificates the server sent are already modelled; only the others need converting.
      const auto same = std::find_if(handles.begin(), handles.end(),
                                     [&](const X509Ptr& h) { return h.get() == link; });
      const auto index = static_cast<std::size_t>(same - handles.begin());
      if (same != handles.end() && index < presented.size()) {
        v.verified_chain.push_back(presented[index]);
        continue;
      }
      auto c = certificate_from_x509(link);
      if (!c) return tl::unexpected(c.error());
      v.verified_chain.push_back(std::move(*c));
    }
    // An intermediate the server did not send, supplied by the local store: never silent.
    for (std::size_t i = 1; i + 1 < v.verified_chain.size(); ++i) {
      const auto& c = v.verified_chain[i];
      const auto same = [&](const Certificate& p) { return same_certificate(p, c); };
      const bool sent = std::any_of(presented.begin(), presented.end(), same);
      const bool downloaded =
          std::any_of(v.fetched_intermediates.begin(), v.fetched_intermediates.end(), same);
      if (!sent && !downloaded) {
        ++from_store;
        v.errors.push_back({static_cast<int>(i), "missing_intermediate",
                            "server did not send the intermediate '" + c.display_name() +
                                "'; it was found only in the local trust store, so clients "
                                "without it will fail"});
      }
    }
  }

  v.hostname_ok = true;
  if (!options.name.empty()) {
    if (auto problem = check_name(leaf, presented.front(), options.name)) {
      v.hostname_ok = false;
      v.errors.insert(v.errors.begin(), std::move(*problem));
    }
  }
  if (!options.pins.empty()) {
    const auto& candidates = v.verified_chain.empty() ? presented : v.verified_chain;
    if (!pin_matches(options.pins, candidates)) {
      v.errors.push_back(
          {0, "pin_mismatch",
           "no certificate in the chain matches the pinned key(s) " + list_names(options.pins)});
    }
  }
  if (v.trusted) {
    check_revocation_evidence(v, options, trust.store.get(), path->chain.get(), now,
                              network_deadline);
  }

  const std::size_t gap_errors = (completed ? 1U : 0U) + from_store;
  v.ok = v.trusted && v.errors.empty();
  if (v.ok) {
    v.verdict = "valid";
  } else if (v.trusted && v.errors.size() == gap_errors) {
    v.verdict = completed ? "valid_only_with_aia_fetch" : "incomplete_chain";
  } else {
    v.verdict = "invalid";
  }
  return v;
}

}  // namespace detail
}  // namespace getcert
