#include "getcert/verify.hpp"

#include <algorithm>
#include <array>
#include <ctime>

#include "getcert/endpoint.hpp"
#include "getcert/text.hpp"
#include "http/aia.hpp"
#include "internal/ossl.hpp"
#include "internal/try.hpp"
#include "internal/x509_util.hpp"
#include "net/dial.hpp"
#include "net/timings.hpp"
#include "verify/crl_files.hpp"
#include "verify/path_search.hpp"
#include "verify/profiles.hpp"
#include "verify/revocation.hpp"
#include "verify/rule_table.hpp"
#include "verify/rules.hpp"
#include "verify/trust_store.hpp"
#include "verify/verify.hpp"

namespace getcert {
namespace {

struct RawProblem {
  int depth;
  int code;
  internal::X509Ptr cert;  // the certificate OpenSSL was looking at; may be null
};

// What the verify callback sees through the context's app data.
struct ProblemLog {
  Purpose purpose = Purpose::server;
  std::vector<RawProblem> problems;
  std::vector<int> without_crl;  // depths --crl-file had no CRL for (a warning, not a failure)
  std::int64_t now = 0;          // the verification time, also set in the context
};

// Collects every problem instead of stopping at the first, so the user sees them all.
int collect_problem(int ok, X509_STORE_CTX* ctx) {
  if (ok == 1) return 1;
  auto* log = static_cast<ProblemLog*>(X509_STORE_CTX_get_app_data(ctx));
  const int code = X509_STORE_CTX_get_error(ctx);
  const int depth = X509_STORE_CTX_get_error_depth(ctx);
  X509* cert = X509_STORE_CTX_get_current_cert(ctx);
  // pathLenConstraint is judged by the rules (profile_rules.cpp), which know which profile
  // exempts self-issued intermediates; OpenSSL counts some of them and Go all of them.
  if (code == X509_V_ERR_PATH_LENGTH_EXCEEDED) return 1;
  // A leaf refused for its keyUsage alone is the leaf_key_usage_purpose rule's to weigh (RFC
  // 5280 6.1 never reads the leaf's keyUsage); its EKU and nsCertType stay OpenSSL's to judge.
  if (code == X509_V_ERR_INVALID_PURPOSE && depth == 0 && cert != nullptr &&
      detail::leaf_key_usage_refuses(cert, log->purpose) &&
      X509_get_ext_by_NID(cert, NID_netscape_cert_type, -1) < 0) {
    const std::uint32_t xku = X509_get_extended_key_usage(cert);
    const std::uint32_t wanted = log->purpose == Purpose::server ? XKU_SSL_SERVER : XKU_SSL_CLIENT;
    if ((X509_get_extension_flags(cert) & EXFLAG_XKUSAGE) == 0 || (xku & wanted) != 0) return 1;
  }
  // Offline CRLs cover the issuers the user has CRLs for; the others are unchecked, not bad.
  if (code == X509_V_ERR_UNABLE_TO_GET_CRL) {
    log->without_crl.push_back(depth);
    return 1;
  }
  // A CRL whose signature does not verify (or whose issuer cannot be found) is no evidence: its
  // entries revoke nothing. OpenSSL checks the CRL first, reports that, then reads its entries
  // anyway; the entry is dropped here, and the unusable CRL stays reported as such. (An expired
  // CRL is still the issuer's word: a revocation in it stands.)
  if (code == X509_V_ERR_CERT_REVOKED &&
      std::any_of(log->problems.begin(), log->problems.end(), [&](const RawProblem& p) {
        return p.depth == depth && (p.code == X509_V_ERR_CRL_SIGNATURE_FAILURE ||
                                    p.code == X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE ||
                                    p.code == X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER);
      })) {
    return 1;
  }
  // RFC 5280 4.1.2.5: the validity period includes notAfter. OpenSSL's X509_cmp_time()
  // counts the notAfter second itself as expired; give that second back.
  if (code == X509_V_ERR_CERT_HAS_EXPIRED && cert != nullptr &&
      ASN1_TIME_cmp_time_t(X509_get0_notAfter(cert), static_cast<time_t>(log->now)) == 0) {
    return 1;
  }
  const bool seen =
      std::any_of(log->problems.begin(), log->problems.end(),
                  [&](const RawProblem& p) { return p.code == code && p.depth == depth; });
  if (!seen) {
    if (cert != nullptr) X509_up_ref(cert);
    log->problems.push_back({depth, code, internal::X509Ptr(cert)});
  }
  return 1;
}

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
    if (auto parsed = internal::certificate_from_x509(raw.cert.get())) cert = std::move(*parsed);
  }
  const std::string who = quote_name(cert.display_name());
  const std::string issuer = quote_name(cert.issuer_cn.empty() ? cert.issuer : cert.issuer_cn);
  switch (raw.code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      p.code = ProblemCode::expired;
      p.reason = "certificate " + who + " expired " + days_phrase(now - cert.not_after) +
                 " ago (not after " + format_utc(cert.not_after) + ")";
      break;
    case X509_V_ERR_CERT_NOT_YET_VALID:
      p.code = ProblemCode::not_yet_valid;
      p.reason = "certificate " + who + " is not valid until " + format_utc(cert.not_before) +
                 " (in " + days_phrase(cert.not_before - now) + ")";
      break;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      if (!name_in_presented(cert.issuer, presented) && !cert.is_ca) {
        p.code = ProblemCode::missing_intermediate;
        p.reason = "unable to get local issuer: server did not send intermediate " + issuer +
                   " and it is not in the trust store";
      } else {
        p.code = ProblemCode::unknown_issuer;
        p.reason = "unable to get local issuer: " + issuer + " (issuer of " + who +
                   ") is not in the trust store";
      }
      break;
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      p.code = ProblemCode::self_signed;
      p.reason = "self-signed certificate " + who + " is not in the trust store";
      break;
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      p.code = ProblemCode::untrusted_root;
      p.reason = "chain ends in root " + who + ", which is not in the trust store";
      break;
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      p.code = ProblemCode::bad_signature;
      p.reason = "signature on " + who + " does not verify with its issuer's key";
      break;
    case X509_V_ERR_INVALID_PURPOSE:
      p.code = ProblemCode::wrong_purpose;
      p.reason = "certificate " + who +
                 " is not allowed for this purpose (its extended key usage, " +
                 "key usage or the issuers' extended key usage)";
      break;
    case X509_V_ERR_INVALID_CA:
      p.code = ProblemCode::invalid_ca;
      p.reason = "certificate " + who + " signs others but is not a valid CA";
      break;
    case X509_V_ERR_PATH_LENGTH_EXCEEDED:
      p.code = ProblemCode::path_length_exceeded;
      p.reason = "chain is longer than " + who + " allows (pathLenConstraint)";
      break;
    case X509_V_ERR_CERT_REVOKED:
      p.code = ProblemCode::revoked;
      p.reason = "certificate " + who + " has been revoked";
      break;
    case X509_V_ERR_PERMITTED_VIOLATION:
    case X509_V_ERR_EXCLUDED_VIOLATION:
    case X509_V_ERR_SUBTREE_MINMAX:
    case X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE:
    case X509_V_ERR_UNSUPPORTED_CONSTRAINT_SYNTAX:
    case X509_V_ERR_UNSUPPORTED_NAME_SYNTAX:
      p.code = ProblemCode::name_constraint_violation;
      p.reason = "certificate " + who + " has a name its issuers' name constraints do not allow (" +
                 X509_verify_cert_error_string(raw.code) + ")";
      break;
    case X509_V_ERR_CERT_CHAIN_TOO_LONG:
      p.code = ProblemCode::chain_too_long;
      p.reason =
          "the path to a trust anchor has more intermediate CAs than the maximum depth "
          "allows (at " +
          who + ")";
      break;
    case X509_V_ERR_CRL_HAS_EXPIRED:
    case X509_V_ERR_CRL_NOT_YET_VALID:
    case X509_V_ERR_CRL_SIGNATURE_FAILURE:
    case X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE:
    case X509_V_ERR_UNABLE_TO_GET_CRL_ISSUER:
    case X509_V_ERR_ERROR_IN_CRL_LAST_UPDATE_FIELD:
    case X509_V_ERR_ERROR_IN_CRL_NEXT_UPDATE_FIELD:
      p.code = ProblemCode::crl_problem;
      p.reason =
          "the CRL for " + who + " cannot be used: " + X509_verify_cert_error_string(raw.code);
      break;
    case X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION:
      p.code = ProblemCode::unhandled_critical_extension;
      p.reason = "certificate " + who +
                 " has a critical extension no verifier understands, so none may accept it";
      break;
    default:
      p.code = ProblemCode::x509_error;
      p.reason = std::string(X509_verify_cert_error_string(raw.code)) + " (OpenSSL error " +
                 std::to_string(raw.code) + (raw.cert ? ", certificate " + who : "") + ")";
  }
  return p;
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

struct NameCheck {
  std::optional<VerifyProblem> problem;
  bool by_common_name = false;  // matched only through the subject CN fallback
};

bool has_san_extension(X509* cert) {
  return X509_get_ext_by_NID(cert, NID_subject_alt_name, -1) >= 0;
}

// RFC 6125 matching, done apart from path building so a mismatch never hides chain problems.
// A leaf with a subjectAltName extension is matched on its SANs alone, whatever kinds they
// are (RFC 6125 6.4.4); only a leaf with no SAN extension at all falls back to its CN.
NameCheck check_name(X509* leaf, const Certificate& model, const std::string& wanted) {
  std::string name = wanted;
  const bool ip = is_ip_literal(name);
  if (!ip) {
    // A pattern such as "*.example.com" is not a name a client connects to: never a match.
    auto normalized = normalize_hostname(name);
    if (!normalized) {
      return {VerifyProblem{0, ProblemCode::hostname_mismatch,
                            "'" + wanted + "' is not a host name a certificate can be checked for"},
              false};
    }
    name = std::move(*normalized);
  }
  const bool has_sans = has_san_extension(leaf);
  const unsigned flags =
      X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | (has_sans ? X509_CHECK_FLAG_NEVER_CHECK_SUBJECT : 0U);
  const int rc = ip ? X509_check_ip_asc(leaf, name.c_str(), 0)
                    : X509_check_host(leaf, name.data(), name.size(), flags, nullptr);
  if (rc == 1) return {std::nullopt, !ip && !has_sans};
  VerifyProblem p;
  p.depth = 0;
  if (ip) {
    p.code = ProblemCode::ip_mismatch;
    p.reason = "IP mismatch: certificate is not valid for " + name +
               (model.sans.ip.empty() ? " (it has no IP address SANs"
                                      : " (its IP SANs are " + list_names(model.sans.ip)) +
               (model.sans.dns.empty() ? ")" : "; DNS names: " + list_names(model.sans.dns) + ")");
  } else {
    p.code = ProblemCode::hostname_mismatch;
    if (!model.sans.dns.empty()) {
      p.reason =
          "name mismatch: certificate is for " + list_names(model.sans.dns) + ", not " + name;
    } else if (has_sans) {
      // With SANs present the CN is never a name (RFC 6125), so do not cite it as one.
      p.reason =
          "name mismatch: certificate has no DNS names" +
          (model.sans.ip.empty() ? std::string()
                                 : " (only IP addresses: " + list_names(model.sans.ip) + ")") +
          ", so it is not valid for " + name +
          (model.subject_cn.empty() ? std::string()
                                    : "; its CN does not count because it has SANs");
    } else {
      p.reason = "name mismatch: certificate is for " +
                 (model.subject_cn.empty() ? std::string("no name") : model.subject_cn + " (CN)") +
                 ", not " + name;
    }
  }
  return {p, false};
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

bool is_issuer_problem(int code) {
  return code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
         code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
         code == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
}

struct PathResult {
  std::vector<RawProblem> problems;
  std::vector<int> without_crl;
  internal::X509StackPtr chain;  // what OpenSSL built, leaf first (complete or not)
  bool ran = false;
  bool anchored = false;  // the chain ends at a certificate of the trust store
};

// Level 0: OpenSSL judges no key or signature strength. The key rules (keys.cpp) weigh it per
// profile instead (level 2 for webpki, openssl and cabf; a lower floor for rfc5280), so one
// path build answers every profile.
constexpr int kAuthLevel = 0;
// OpenSSL's default bound on intermediates while it builds a path.
constexpr int kOpensslDepth = 100;

Result<PathResult> build_path(X509* leaf, STACK_OF(X509) * untrusted, const VerifyOptions& options,
                              X509_STORE* store, std::int64_t now, bool partial_chain,
                              STACK_OF(X509_CRL) * crls) {
  internal::clear_errors();
  internal::X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx) return fail(Errc::internal, "out of memory", internal::drain_errors());
  if (X509_STORE_CTX_init(ctx.get(), store, leaf, untrusted) != 1) {
    return fail(Errc::internal, "cannot prepare verification", internal::drain_errors());
  }
  PathResult out;
  ProblemLog log;
  log.now = now;
  log.purpose = options.purpose;
  X509_STORE_CTX_set_app_data(ctx.get(), &log);
  X509_STORE_CTX_set_verify_cb(ctx.get(), collect_problem);
  if (const int purpose = openssl_purpose(options.purpose); purpose != 0) {
    X509_STORE_CTX_set_purpose(ctx.get(), purpose);
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  // One clock for OpenSSL's checks and ours (messages, the notAfter second, revocation).
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(now));
  X509_VERIFY_PARAM_set_auth_level(param, kAuthLevel);
  if (partial_chain) X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN);
  // max_depth is the rules' to judge (self-issued intermediates do not count, as RFC 5280
  // 6.1.4 (l) does not count them for pathLen); OpenSSL only needs room to build the path.
  X509_VERIFY_PARAM_set_depth(param, std::max(options.max_depth.value_or(0), kOpensslDepth));
  if (crls != nullptr && sk_X509_CRL_num(crls) > 0) {
    X509_STORE_CTX_set0_crls(ctx.get(), crls);  // borrowed for the life of ctx
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
  }
  const int rc = X509_verify_cert(ctx.get());
  if (rc < 0) return fail(Errc::internal, "verification could not run", internal::drain_errors());
  internal::clear_errors();
  out.ran = rc == 1;
  out.chain.reset(X509_STORE_CTX_get1_chain(ctx.get()));
  out.problems = std::move(log.problems);
  out.without_crl = std::move(log.without_crl);
  out.anchored = X509_STORE_CTX_get_num_untrusted(ctx.get()) < sk_X509_num(out.chain.get()) &&
                 std::none_of(out.problems.begin(), out.problems.end(), [](const RawProblem& p) {
                   return is_issuer_problem(p.code) ||
                          p.code == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
                          p.code == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT;
                 });
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const RawProblem& a, const RawProblem& b) { return a.depth < b.depth; });
  return out;
}

// The exact path `certs` (leaf first), judged as the first path is: OpenSSL verifies it with
// its last certificate as the only trust anchor and its others as the only helpers.
Result<PathResult> judge_exact_path(const std::vector<X509*>& certs, const VerifyOptions& options,
                                    std::int64_t now, STACK_OF(X509_CRL) * crls) {
  internal::X509StorePtr anchor(X509_STORE_new());
  internal::X509RefStackPtr helpers(sk_X509_new_null());
  if (!anchor || !helpers || X509_STORE_add_cert(anchor.get(), certs.back()) != 1) {
    return fail(Errc::internal, "out of memory", internal::drain_errors());
  }
  for (std::size_t i = 1; i + 1 < certs.size(); ++i) {
    if (sk_X509_push(helpers.get(), certs[i]) <= 0) return fail(Errc::internal, "out of memory");
  }
  const bool root = (X509_get_extension_flags(certs.back()) & EXFLAG_SS) != 0;
  return build_path(certs.front(), helpers.get(), options, anchor.get(), now, !root, crls);
}

// The profile's rules over a path as far as it was built.
std::vector<detail::RuleFinding> path_findings(const PathResult& path, const VerifyOptions& options,
                                               STACK_OF(X509_CRL) * crls,
                                               detail::RuleBudget& budget,
                                               bool constraints_counted = false) {
  detail::PathView view;
  for (int i = 0; i < sk_X509_num(path.chain.get()); ++i) {
    view.certs.push_back(sk_X509_value(path.chain.get(), i));
  }
  view.anchored = path.anchored;
  view.purpose = options.purpose;
  view.max_intermediates = options.max_depth;
  view.crls = crls;
  view.constraints_counted = constraints_counted;
  return detail::check_rules(view, budget);
}

bool profile_rejects(const std::vector<detail::RuleFinding>& findings, Profile profile) {
  return std::any_of(findings.begin(), findings.end(), [&](const detail::RuleFinding& f) {
    return detail::level_of(f, profile) == detail::RuleLevel::error;
  });
}

// A problem of the leaf alone, which every other path would share: searching is pointless.
bool leaf_intrinsic(const RawProblem& p) {
  return p.depth == 0 &&
         (p.code == X509_V_ERR_CERT_HAS_EXPIRED || p.code == X509_V_ERR_CERT_NOT_YET_VALID ||
          p.code == X509_V_ERR_INVALID_PURPOSE || p.code == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT);
}

bool worth_searching(const PathResult& path, const std::vector<detail::RuleFinding>& findings,
                     Profile profile) {
  const bool path_problem = std::any_of(path.problems.begin(), path.problems.end(),
                                        [](const RawProblem& p) { return !leaf_intrinsic(p); });
  // Findings at depth 0 are about the leaf, except a wildcard that an issuer's exclusion hits.
  const bool path_finding =
      std::any_of(findings.begin(), findings.end(), [&](const detail::RuleFinding& f) {
        return detail::level_of(f, profile) == detail::RuleLevel::error &&
               (f.depth > 0 || f.code == ProblemCode::excluded_wildcard ||
                f.code == ProblemCode::budget_exhausted);
      });
  return path_problem || path_finding;
}

std::string budget_reason(detail::BudgetLimit limit) {
  switch (limit) {
    case detail::BudgetLimit::signatures:
      return "path building stopped after " + std::to_string(detail::PathBudget::kSignatureChecks) +
             " signature checks (the bound of rustls-webpki and Go): the certificates offer more "
             "candidate issuers than any real PKI does, as a path-building attack would";
    case detail::BudgetLimit::build_calls:
      return "path building stopped after " + std::to_string(detail::PathBudget::kBuildCalls) +
             " steps (rustls-webpki's bound, RUSTSEC-2023-0053): the certificates form a maze "
             "of issuers, as a path-building attack would";
    case detail::BudgetLimit::candidate_paths:
      return "path building stopped after judging " +
             std::to_string(detail::PathBudget::kCandidatePaths) +
             " candidate paths to a trust anchor, none of them valid";
    case detail::BudgetLimit::name_constraints:
      return "verification stopped after 250,000 name-constraint comparisons (rustls-webpki's "
             "bound, RUSTSEC-2023-0053): the chain is built to exhaust verifiers";
    case detail::BudgetLimit::none:
      break;
  }
  return "path building stopped";
}

bool same_certificate(const Certificate& a, const Certificate& b) {
  return a.subject == b.subject && a.spki_sha256 == b.spki_sha256;
}

// Downloads missing issuers by following CA Issuers URLs upward from where the path broke.
// `gap_url` becomes the URL the gap's own issuer came from, or the last one that failed for it.
std::vector<Certificate> fetch_missing_issuers(const PathResult& path,
                                               detail::Clock::time_point deadline,
                                               bool revocation_planned, const std::string& proxy,
                                               const DownloadPolicy& policy,
                                               std::vector<std::string>& notes,
                                               std::string& gap_url) {
  std::vector<Certificate> fetched;
  constexpr int kMaxDownloads = 4;
  const int top = sk_X509_num(path.chain.get()) - 1;
  auto start = internal::certificate_from_x509(sk_X509_value(path.chain.get(), top));
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
          url, detail::share_of(deadline, urls_left-- + (revocation_planned ? 1 : 0)), proxy,
          policy);
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
  p.code = ProblemCode::missing_intermediate;
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

void check_revocation_evidence(Verification& v, const VerifyOptions& options,
                               STACK_OF(X509) * chain, std::int64_t now,
                               detail::Clock::time_point network_deadline) {
  const int n = sk_X509_num(chain);
  if (n < 2) return;
  detail::RevocationContext ctx{chain, now, network_deadline, options.proxy,
                                options.download_policy};
  if (!options.ocsp_staple.empty()) {
    v.revocation.push_back(detail::check_ocsp_response(options.ocsp_staple, 0, ctx,
                                                       RevocationSource::ocsp_staple, ""));
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
    const bool staple = r.source == RevocationSource::ocsp_staple;
    const std::string via = staple                               ? "the stapled OCSP response"
                            : r.source == RevocationSource::ocsp ? "OCSP (" + r.url + ")"
                            : r.source == RevocationSource::crl  ? "the CRL (" + r.url + ")"
                                                                 : "revocation check";
    if (r.status == RevocationStatus::revoked) {
      v.revocation_ok = false;
      v.errors.push_back({r.depth, ProblemCode::revoked,
                          who + " is revoked according to " + via +
                              (r.revoked_at ? " since " + format_utc(*r.revoked_at) : "") +
                              (r.detail.empty() ? "" : " (reason: " + r.detail + ")")});
    } else if (r.status == RevocationStatus::error && staple) {
      v.revocation_ok = false;
      v.errors.push_back(
          {r.depth, ProblemCode::bad_ocsp_staple, "stapled OCSP response rejected: " + r.detail});
    } else if (r.status == RevocationStatus::none && r.depth > 0) {
      // Many CAs publish no revocation source for their intermediates: nothing to ask, and
      // not the server's fault. It stays visible in the JSON report.
      continue;
    } else if (r.status != RevocationStatus::good) {
      const std::string text = via + " for " + who + ": " + r.detail;
      if (options.require_revocation) {
        v.revocation_ok = false;
        v.errors.push_back(
            {r.depth, ProblemCode::revocation_unavailable, text + " (--require-revocation)"});
      } else {
        v.warnings.push_back({ProblemCode::revocation_unchecked, r.depth, text});
      }
    }
  }
}

// Index of `cert` in `chain` (compared by encoding), or -1.
int position_in(STACK_OF(X509) * chain, X509* cert) {
  for (int k = 0; k < sk_X509_num(chain); ++k) {
    if (X509_cmp(sk_X509_value(chain, k), cert) == 0) return k;
  }
  return -1;
}

// What the server sends, judged against the path (leaf .. as far as it goes): things a
// server admin can fix, none of which decides the verdict on its own.
std::vector<VerifyNote> find_chain_issues(const std::vector<Certificate>& presented,
                                          const std::vector<internal::X509Ptr>& handles,
                                          STACK_OF(X509) * path, std::int64_t now) {
  std::vector<VerifyNote> issues;
  const std::size_t n = presented.size();
  std::vector<int> pos(n, -1);
  std::vector<bool> repeated(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (presented[j].der == presented[i].der) repeated[i] = true;
    }
    if (!repeated[i] && path != nullptr) pos[i] = position_in(path, handles[i].get());
  }
  for (std::size_t i = 1; i < n; ++i) {
    const Certificate& c = presented[i];
    const std::string who = "'" + c.display_name() + "'";
    const auto depth = static_cast<int>(i);
    if (repeated[i]) {
      issues.push_back({ProblemCode::duplicate, depth,
                        "certificate " + who + " is sent more than once; send it once"});
      continue;
    }
    if (pos[i] < 0) {
      if (c.not_after < now) {
        issues.push_back({ProblemCode::expired_unneeded, depth,
                          "certificate " + who + " expired on " + format_utc(c.not_after) +
                              " and is not needed for the chain; stop sending it (some "
                              "clients reject the chain because of it)"});
      } else {
        issues.push_back(
            {ProblemCode::unrelated, depth,
             "certificate " + who + " belongs to no path from the leaf; stop sending it"});
      }
      continue;
    }
    if (c.self_signed) {
      issues.push_back({ProblemCode::root_sent, depth,
                        "the server sends its root " + who +
                            "; clients use their own copy or reject it, so leave it out"});
    }
    for (std::size_t j = i + 1; j < n; ++j) {
      if (pos[j] >= 0 && pos[j] < pos[i]) {
        issues.push_back({ProblemCode::out_of_order, depth,
                          "certificate " + who + " is sent before '" + presented[j].display_name() +
                              "'; send each certificate right after the one it signed"});
        break;
      }
    }
  }
  return issues;
}

// The verdict follows from facts, most serious first.
Verdict verdict_from(const Verification& v) {
  if (!v.trusted || !v.hostname_ok || !v.pins_ok || !v.revocation_ok || !v.staple_ok ||
      !v.profile_ok) {
    return Verdict::invalid;
  }
  if (v.completed_by_aia) return Verdict::valid_only_with_aia_fetch;
  if (v.intermediate_from_store) return Verdict::incomplete_chain;
  return Verdict::valid;
}

}  // namespace

std::string_view to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::valid:
      return "valid";
    case Verdict::valid_only_with_aia_fetch:
      return "valid_only_with_aia_fetch";
    case Verdict::incomplete_chain:
      return "incomplete_chain";
    case Verdict::invalid:
      return "invalid";
  }
  return "invalid";
}

std::string_view to_string(Profile profile) noexcept {
  switch (profile) {
    case Profile::webpki:
      return "webpki";
    case Profile::openssl:
      return "openssl";
    case Profile::rfc5280:
      return "rfc5280";
    case Profile::cabf:
      return "cabf";
  }
  return "webpki";
}

namespace {

struct KeyUsageName {
  KeyUsage usage;
  std::string_view name;
  std::uint32_t bit;  // OpenSSL's KU_ flag
};
constexpr std::array<KeyUsageName, 9> kKeyUsages{{
    {KeyUsage::digital_signature, "digitalSignature", KU_DIGITAL_SIGNATURE},
    {KeyUsage::non_repudiation, "nonRepudiation", KU_NON_REPUDIATION},
    {KeyUsage::key_encipherment, "keyEncipherment", KU_KEY_ENCIPHERMENT},
    {KeyUsage::data_encipherment, "dataEncipherment", KU_DATA_ENCIPHERMENT},
    {KeyUsage::key_agreement, "keyAgreement", KU_KEY_AGREEMENT},
    {KeyUsage::key_cert_sign, "keyCertSign", KU_KEY_CERT_SIGN},
    {KeyUsage::crl_sign, "cRLSign", KU_CRL_SIGN},
    {KeyUsage::encipher_only, "encipherOnly", KU_ENCIPHER_ONLY},
    {KeyUsage::decipher_only, "decipherOnly", KU_DECIPHER_ONLY},
}};

}  // namespace

std::string_view to_string(KeyUsage usage) noexcept {
  for (const auto& k : kKeyUsages) {
    if (k.usage == usage) return k.name;
  }
  return "";
}

std::optional<KeyUsage> key_usage_from_string(std::string_view name) noexcept {
  if (name == "contentCommitment") return KeyUsage::non_repudiation;
  for (const auto& k : kKeyUsages) {
    if (k.name == name) return k.usage;
  }
  return std::nullopt;
}

std::optional<Profile> profile_from_string(std::string_view name) noexcept {
  for (const Profile p : detail::kProfiles) {
    if (to_string(p) == name) return p;
  }
  return std::nullopt;
}

std::string_view to_string(RevocationStatus status) noexcept {
  switch (status) {
    case RevocationStatus::good:
      return "good";
    case RevocationStatus::revoked:
      return "revoked";
    case RevocationStatus::unknown:
      return "unknown";
    case RevocationStatus::error:
      return "error";
    case RevocationStatus::none:
      return "none";
  }
  return "none";
}

std::string_view to_string(RevocationSource source) noexcept {
  switch (source) {
    case RevocationSource::ocsp_staple:
      return "ocsp-staple";
    case RevocationSource::ocsp:
      return "ocsp";
    case RevocationSource::crl:
      return "crl";
    case RevocationSource::none:
      return "none";
  }
  return "none";
}

std::vector<Certificate> full_chain(const Verification& verification) {
  const auto& path = verification.verified_chain;
  if (path.empty()) return {};
  return leaf_plus_intermediates(path.front(), {path.begin() + 1, path.end()});
}

Result<Verification> verify_chain(const std::vector<Certificate>& presented,
                                  const VerifyOptions& options) {
  GETCERT_TRY_ASSIGN(auto trust, detail::load_trust_store(options.trust));
  return detail::verify_with_store(presented, options, trust);
}

namespace detail {
namespace {

// One verification as it goes through its phases: what came in, the path being judged, and
// the Verification being filled. Each phase below is a step of docs/verification.md's pipeline:
// build the paths (getcert's walk; OpenSSL's for --profile openssl) -> complete them via AIA
// -> the verified chain -> names -> pins, staple, CRL coverage -> revocation -> the profile ->
// chain issues, verdict.
struct Run {
  Run(const std::vector<Certificate>& p, const VerifyOptions& o, const TrustStore& t)
      : presented(p), options(o), trust(t), recorder(v.timings, o.on_step) {}

  const std::vector<Certificate>& presented;
  const VerifyOptions& options;
  const TrustStore& trust;
  Verification v;
  const TimingRecorder recorder;  // collects v.timings while the run lives
  // One parsed handle per certificate for the whole verification: OpenSSL decodes a public
  // key lazily per handle, and that decode dominates the cost of verifying.
  std::vector<internal::X509Ptr> handles;
  internal::X509RefStackPtr untrusted;  // borrows from handles
  X509* leaf = nullptr;
  std::int64_t now = 0;
  internal::X509CrlStackPtr crls;
  // One budget for every HTTP request verification makes (AIA, OCSP, CRL).
  Clock::time_point network_deadline;
  std::optional<PathResult> path;
  // Where the server left a gap: the problem that says so, and whether AIA completion closed it.
  std::optional<VerifyProblem> gap_problem;
  bool completed = false;
  int gap_depth = 0;
  std::string gap_url;
  // The profile's rules over the chosen path; one name-constraint budget for every path judged.
  RuleBudget rule_budget;
  std::vector<RuleFinding> findings;
  // Store certificates the path search looked up: the chosen path may borrow them.
  std::vector<internal::X509Ptr> looked_up;
  std::optional<VerifyProblem> budget_problem;
  bool name_by_cn = false;
};

Result<void> parse_presented(Run& r, const std::vector<X509*>& parsed) {
  for (std::size_t i = 0; i < r.presented.size(); ++i) {
    X509* given = i < parsed.size() ? parsed[i] : nullptr;
    if (given != nullptr) X509_up_ref(given);
    internal::X509Ptr h(
        given != nullptr ? given : internal::x509_from_certificate(r.presented[i]).release());
    if (!h) return fail(Errc::internal, "cannot re-read a presented certificate");
    r.handles.push_back(std::move(h));
  }
  r.leaf = r.handles.front().get();
  r.untrusted.reset(sk_X509_new_null());
  if (!r.untrusted) return fail(Errc::internal, "out of memory");
  for (std::size_t i = 1; i < r.handles.size(); ++i) {
    sk_X509_push(r.untrusted.get(), r.handles[i].get());
  }
  r.now = r.options.at_time.value_or(static_cast<std::int64_t>(std::time(nullptr)));
  GETCERT_TRY_ASSIGN(r.crls, load_crl_files(r.options.crl_files));
  r.network_deadline = Clock::now() + r.options.network_timeout;
  return {};
}

Result<PathResult> build_from_presented(Run& r, bool partial_chain) {
  return build_path(r.leaf, r.untrusted.get(), r.options, r.trust.store.get(), r.now, partial_chain,
                    r.crls.get());
}

// The openssl profile's path: the one OpenSSL builds, as OpenSSL clients take it. Every
// certificate the user names as trusted is an anchor, as in Go, browsers, curl and gRPC
// (OpenSSL's partial chains); a path to a self-signed root is still preferred.
Result<void> build_openssl_path(Run& r) {
  GETCERT_TRY_ASSIGN(auto first, build_from_presented(r, false));
  r.path = std::move(first);
  if (r.trust.explicit_anchors && !r.path->anchored) {
    GETCERT_TRY_ASSIGN(auto partial, build_from_presented(r, true));
    if (partial.anchored) r.path = std::move(partial);
  }
  r.findings = path_findings(*r.path, r.options, r.crls.get(), r.rule_budget);
  return {};
}

// Where the path builder looks for issuers: what the server sent (and AIA brought), the store.
IssuerSources issuer_sources(Run& r) {
  IssuerSources sources;
  for (std::size_t i = 1; i < r.handles.size(); ++i)
    sources.untrusted.push_back(r.handles[i].get());
  sources.store = r.trust.store.get();
  sources.explicit_anchors = r.trust.explicit_anchors;
  sources.now = r.now;
  sources.purpose = r.options.purpose;
  // The walk may go as deep as OpenSSL would; --max-depth is the rules' to judge, so that
  // self-issued intermediates do not count (RFC 5280 6.1.4 (l)).
  sources.max_intermediates =
      static_cast<std::size_t>(std::max(r.options.max_depth.value_or(0), kOpensslDepth));
  sources.constraint_budget = &r.rule_budget;
  return sources;
}

// A path as far as the walk could build it, with no anchor at its end: OpenSSL, given no trust
// anchor and that path's certificates as the only helpers, says where and why it stops (an
// issuer missing, a self-signed certificate not trusted), which is what the report shows.
Result<PathResult> judge_dead_end(const Run& r, const std::vector<X509*>& certs) {
  internal::X509StorePtr none(X509_STORE_new());
  internal::X509RefStackPtr helpers(sk_X509_new_null());
  if (!none || !helpers) return fail(Errc::internal, "out of memory");
  for (std::size_t i = 1; i < certs.size(); ++i) {
    if (sk_X509_push(helpers.get(), certs[i]) <= 0) return fail(Errc::internal, "out of memory");
  }
  return build_path(certs.front(), helpers.get(), r.options, none.get(), r.now, false,
                    r.crls.get());
}

// A rejected path as the report shows it: the chain and every reason it failed.
Result<RejectedPath> rejection(const Run& r, STACK_OF(X509) * chain, const PathResult& judged,
                               const std::vector<RuleFinding>& rules) {
  RejectedPath out;
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    GETCERT_TRY_ASSIGN(auto c, internal::certificate_from_x509(sk_X509_value(chain, i)));
    out.chain.push_back(std::move(c));
  }
  for (const auto& p : judged.problems) out.problems.push_back(describe(p, r.presented, r.now));
  for (const auto& f : rules) {
    if (level_of(f, r.options.profile) == RuleLevel::error) {
      out.problems.push_back({f.depth, f.code, f.reason});
    }
  }
  return out;
}

// What one walk judged: the first path accepted, else the first rejected (the most plausible:
// the walk tries the best candidates first), with the rules' findings for each.
struct WalkResult {
  std::optional<PathResult> chosen;
  std::vector<RuleFinding> chosen_findings;
  std::optional<PathResult> first_rejected;
  std::vector<RuleFinding> first_rejected_findings;
  std::vector<std::vector<X509*>> judged;
  std::optional<Error> error;
};

// Judges one complete path: OpenSSL's checks on exactly that path (its anchor the only trusted
// certificate, its intermediates the only helpers), then the profile's rules.
Judgement judge_candidate(Run& r, WalkResult& w, const std::vector<X509*>& certs) {
  const auto seen = std::find(w.judged.begin(), w.judged.end(), certs);
  if (seen != w.judged.end()) return Judgement::already_judged;
  w.judged.push_back(certs);
  ++r.v.path_search.candidate_paths;
  auto judged = judge_exact_path(certs, r.options, r.now, r.crls.get());
  if (!judged) {
    w.error = judged.error();
    return Judgement::accepted;  // stop: the same failure would repeat for every path
  }
  auto rules = path_findings(*judged, r.options, r.crls.get(), r.rule_budget, true);
  if (judged->ran && judged->problems.empty() && !profile_rejects(rules, r.options.profile)) {
    w.chosen = std::move(*judged);
    w.chosen_findings = std::move(rules);
    return Judgement::accepted;
  }
  auto rejected = rejection(r, judged->chain.get(), *judged, rules);
  if (!rejected) {
    w.error = rejected.error();
    return Judgement::accepted;  // stop, as above
  }
  r.v.rejected_paths.push_back(std::move(*rejected));
  const bool shared = !worth_searching(*judged, rules, r.options.profile);
  if (!w.first_rejected) {
    w.first_rejected = std::move(*judged);
    w.first_rejected_findings = std::move(rules);
  }
  // The leaf's own failure is every path's: no other path can do better.
  return shared ? Judgement::final_rejection : Judgement::rejected;
}

// Every profile but openssl: getcert's path builder (path_search.cpp) walks the candidate paths
// and judges each complete one. The verdict is about the first path accepted; when none is, the
// first rejected; when no path reaches an anchor, the longest the walk built.
Result<void> walk_paths(Run& r) {
  const IssuerSources sources = issuer_sources(r);
  WalkResult w;
  const PathJudge judge = [&](const std::vector<X509*>& certs) {
    return judge_candidate(r, w, certs);
  };
  PathBudget budget;
  const SearchOutcome out = search_paths(r.leaf, sources, budget, judge, r.looked_up);
  if (w.error) return tl::unexpected(*w.error);
  PathSearch& stats = r.v.path_search;
  stats.ran = true;
  stats.signature_checks += budget.signatures_used();
  stats.build_calls += budget.build_calls_used();
  stats.pruned_candidates += out.pruned;
  stats.budget_exhausted = out.end == SearchEnd::exhausted;
  r.budget_problem.reset();
  if (stats.budget_exhausted && !w.chosen) {
    r.budget_problem =
        VerifyProblem{0, ProblemCode::budget_exhausted, budget_reason(budget.exhausted)};
  }
  if (w.chosen || w.first_rejected) {
    r.path = std::move(w.chosen ? w.chosen : w.first_rejected);
    r.findings = std::move(w.chosen ? w.chosen_findings : w.first_rejected_findings);
    // The first path failed for the leaf's own reason, which every path shares: no other path
    // was tried, and that one is the verdict itself, not a rejected alternative.
    if (out.end == SearchEnd::stopped && r.v.rejected_paths.size() == 1) {
      r.v.rejected_paths.clear();
    }
    return {};
  }
  const std::vector<X509*> dead_end =
      out.dead_end.empty() ? std::vector<X509*>{r.leaf} : out.dead_end;
  if (stats.budget_exhausted || out.too_deep) {
    // Stopped before any path could be judged: the bound is the answer, the walk its evidence.
    PathResult stopped;
    stopped.chain.reset(sk_X509_new_null());
    for (X509* c : dead_end) {
      if (!stopped.chain || sk_X509_push(stopped.chain.get(), c) <= 0 || X509_up_ref(c) != 1) {
        return fail(Errc::internal, "out of memory");
      }
    }
    r.path = std::move(stopped);
    r.findings.clear();
    if (!stats.budget_exhausted) {
      r.findings.push_back({static_cast<int>(dead_end.size() - 1), ProblemCode::chain_too_long,
                            "no path to a trust anchor within " +
                                std::to_string(sources.max_intermediates) +
                                " intermediate CAs: the chain goes deeper than " +
                                (r.options.max_depth ? "the maximum depth allows"
                                                     : "OpenSSL's default depth of 100")});
    }
    return {};
  }
  GETCERT_TRY_ASSIGN(auto judged, judge_dead_end(r, dead_end));
  r.path = std::move(judged);
  r.findings = path_findings(*r.path, r.options, r.crls.get(), r.rule_budget, true);
  return {};
}

Result<void> build_paths(Run& r) {
  return r.options.profile == Profile::openssl ? build_openssl_path(r) : walk_paths(r);
}

// After AIA brought issuers: the path again, with them among the candidates. `completed` when
// no issuer is missing any more; otherwise the earlier path stands.
Result<void> rebuild_after_aia(Run& r) {
  if (r.options.profile == Profile::openssl) {
    GETCERT_TRY_ASSIGN(auto again, build_from_presented(r, false));
    r.completed = std::none_of(again.problems.begin(), again.problems.end(),
                               [](const RawProblem& p) { return is_issuer_problem(p.code); });
    if (r.completed) {
      r.path = std::move(again);
      r.findings = path_findings(*r.path, r.options, r.crls.get(), r.rule_budget);
    }
    return {};
  }
  std::optional<PathResult> before = std::move(r.path);
  std::vector<RuleFinding> before_findings = std::move(r.findings);
  GETCERT_TRY(walk_paths(r));
  r.completed = r.path->anchored;
  if (!r.completed) {
    r.path = std::move(before);
    r.findings = std::move(before_findings);
  }
  return {};
}

// Where the server left a gap, say so plainly; with fetch_missing, complete it as a browser
// would, from the CA Issuers URLs.
Result<void> complete_via_aia(Run& r) {
  const auto gap =
      std::find_if(r.path->problems.begin(), r.path->problems.end(), [&](const RawProblem& p) {
        if (!is_issuer_problem(p.code) || !p.cert) return false;
        auto c = internal::certificate_from_x509(p.cert.get());
        return c && !c->self_signed && !name_in_presented(c->issuer, r.presented) &&
               !c->ca_issuers_urls.empty();
      });
  if (gap == r.path->problems.end()) return {};
  r.gap_depth = gap->depth;
  GETCERT_TRY_ASSIGN(auto child, internal::certificate_from_x509(gap->cert.get()));
  std::vector<std::string> notes;
  if (r.options.fetch_missing) {
    r.v.fetched_intermediates =
        fetch_missing_issuers(*r.path, r.network_deadline, r.options.check_revocation,
                              r.options.proxy, r.options.download_policy, notes, r.gap_url);
    if (!r.v.fetched_intermediates.empty()) {
      for (const auto& c : r.v.fetched_intermediates) {
        internal::X509Ptr h = internal::x509_from_certificate(c);
        if (h && sk_X509_push(r.untrusted.get(), h.get()) > 0) r.handles.push_back(std::move(h));
      }
      GETCERT_TRY(rebuild_after_aia(r));
    }
  }
  r.gap_problem =
      missing_intermediate(r.gap_depth, child, r.completed, r.options.fetch_missing, r.gap_url);
  // Notes explain a failed completion; after a success they are noise.
  if (!r.completed) {
    for (auto& n : notes) {
      r.v.warnings.push_back({ProblemCode::aia_fetch_failed, std::nullopt, std::move(n)});
    }
  }
  return {};
}

// The path's own errors decide `trusted`; a gap completed from the AIA URL still counts as a
// path to a trust anchor.
void judge_path(Run& r) {
  Verification& v = r.v;
  v.path_search.name_constraint_comparisons =
      RuleBudget{}.name_constraint_comparisons - r.rule_budget.name_constraint_comparisons;
  for (const auto& p : r.path->problems) {
    if (r.gap_problem && is_issuer_problem(p.code)) continue;
    v.errors.push_back(describe(p, r.presented, r.now));
  }
  if (r.budget_problem) v.errors.push_back(*r.budget_problem);
  v.trusted = r.path->ran && v.errors.empty() && (!r.gap_problem || r.completed);
  v.completed_by_aia = v.trusted && r.completed;
  if (r.gap_problem) v.errors.insert(v.errors.begin(), *r.gap_problem);
}

// The verified chain in the model, each certificate the server sent as it was modelled, and
// what that chain says about the server (an intermediate only the store had, a non-root anchor).
Result<void> assemble_verified_chain(Run& r) {
  Verification& v = r.v;
  if (!v.trusted) return {};
  STACK_OF(X509)* chain = r.path->chain.get();
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    X509* link = sk_X509_value(chain, i);
    const auto same = std::find_if(r.handles.begin(), r.handles.end(),
                                   [&](const internal::X509Ptr& h) { return h.get() == link; });
    const auto index = static_cast<std::size_t>(same - r.handles.begin());
    if (same != r.handles.end() && index < r.presented.size()) {
      v.verified_chain.push_back(r.presented[index]);
      continue;
    }
    GETCERT_TRY_ASSIGN(auto c, internal::certificate_from_x509(link));
    v.verified_chain.push_back(std::move(c));
  }
  // An intermediate the server did not send, supplied by the local store: never silent.
  for (std::size_t i = 1; i + 1 < v.verified_chain.size(); ++i) {
    const auto& c = v.verified_chain[i];
    const auto same = [&](const Certificate& p) { return same_certificate(p, c); };
    const bool sent = std::any_of(r.presented.begin(), r.presented.end(), same);
    const bool downloaded =
        std::any_of(v.fetched_intermediates.begin(), v.fetched_intermediates.end(), same);
    if (!sent && !downloaded) {
      v.intermediate_from_store = true;
      v.errors.push_back({static_cast<int>(i), ProblemCode::missing_intermediate,
                          "server did not send the intermediate '" + c.display_name() +
                              "'; it was found only in the local trust store, so clients "
                              "without it will fail"});
    }
  }
  const Certificate& anchor = v.verified_chain.back();
  if (!anchor.self_signed) {
    v.warnings.push_back(
        {ProblemCode::anchor_not_self_signed, static_cast<int>(v.verified_chain.size() - 1),
         "the chain is trusted at '" + anchor.display_name() +
             "', which is not a root: clients trust it only when given this certificate "
             "itself as a trust anchor (Go, browsers, curl and gRPC do; openssl verify "
             "needs -partial_chain)"});
  }
  return {};
}

// RFC 6125: any one of the names asked will do; the first one's mismatch explains a failure.
void check_names(Run& r) {
  Verification& v = r.v;
  const auto& options = r.options;
  v.hostname_ok = true;
  std::vector<std::string> wanted;
  if (!options.name.empty()) wanted.push_back(options.name);
  for (const auto& n : options.names) {
    if (!n.empty()) wanted.push_back(n);
  }
  if (!wanted.empty()) {
    NameCheck name;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      NameCheck one = check_name(r.leaf, r.presented.front(), wanted[i]);
      if (!one.problem) {
        name = std::move(one);
        break;
      }
      if (i == 0) name = std::move(one);
    }
    if (name.problem && wanted.size() > 1) {
      name.problem->reason += " (nor for any of the other names asked: ";
      for (std::size_t i = 1; i < wanted.size(); ++i) {
        name.problem->reason += (i == 1 ? "" : ", ") + wanted[i];
      }
      name.problem->reason += ")";
    }
    r.name_by_cn = !name.problem && name.by_common_name;
    if (name.problem) {
      v.hostname_ok = false;
      v.errors.insert(v.errors.begin(), std::move(*name.problem));
    } else if (name.by_common_name && options.profile == Profile::openssl) {
      v.warnings.push_back({ProblemCode::cn_fallback, 0,
                            "'" + r.presented.front().subject_cn +
                                "' matched only the subject CN: the leaf has no subjectAltName "
                                "extension, so Go, browsers and many other clients reject it"});
    }
  }
  if (!options.email.empty() &&
      X509_check_email(r.leaf, options.email.data(), options.email.size(), 0) != 1) {
    const auto& emails = r.presented.front().sans.email;
    v.hostname_ok = false;
    v.errors.insert(v.errors.begin(),
                    {0, ProblemCode::email_mismatch,
                     "email mismatch: certificate is not valid for " + options.email +
                         (emails.empty() ? " (it has no email address SANs)"
                                         : " (its email SANs are " + list_names(emails) + ")")});
  }
}

// The certificates of the verified chain that no --crl-file covers (roots need none).
void note_crl_coverage(Run& r) {
  Verification& v = r.v;
  if (!v.trusted) return;
  std::vector<int> told;
  for (const int depth : r.path->without_crl) {
    const auto at = static_cast<std::size_t>(depth);
    const bool root = at + 1 == v.verified_chain.size() && v.verified_chain.back().self_signed;
    if (root || at >= v.verified_chain.size() ||
        std::find(told.begin(), told.end(), depth) != told.end()) {
      continue;
    }
    told.push_back(depth);
    v.warnings.push_back({ProblemCode::revocation_unchecked, depth,
                          "no CRL among the CRL files covers '" +
                              v.verified_chain[at].display_name() + "' (issued by '" +
                              v.verified_chain[at].issuer + "'): its revocation is unchecked"});
  }
}

// VerifyOptions::key_usages: bits the leaf must assert, asked beyond the purpose.
void check_key_usages(Run& r) {
  if (r.options.key_usages.empty()) return;
  const bool has_ku = (X509_get_extension_flags(r.leaf) & EXFLAG_KUSAGE) != 0;
  const std::uint32_t bits = has_ku ? X509_get_key_usage(r.leaf) : 0;
  std::string missing;
  for (const KeyUsage want : r.options.key_usages) {
    for (const auto& k : kKeyUsages) {
      if (k.usage == want && (bits & k.bit) == 0) {
        missing += (missing.empty() ? "" : ", ") + std::string(k.name);
      }
    }
  }
  if (missing.empty()) return;
  r.v.errors.push_back({0, ProblemCode::wrong_purpose,
                        "certificate '" + r.presented.front().display_name() +
                            (has_ku ? "' has a keyUsage without " : "' has no keyUsage, so not ") +
                            missing + ", which was asked for"});
}

void check_pins_and_staple(Run& r) {
  Verification& v = r.v;
  const auto& options = r.options;
  if (!options.pins.empty()) {
    const auto& candidates = v.verified_chain.empty() ? r.presented : v.verified_chain;
    if (!pin_matches(options.pins, candidates)) {
      v.pins_ok = false;
      v.errors.push_back(
          {0, ProblemCode::pin_mismatch,
           "no certificate in the chain matches the pinned key(s) " + list_names(options.pins)});
    }
  }
  if (options.from_handshake && r.presented.front().must_staple && options.ocsp_staple.empty()) {
    v.staple_ok = false;
    v.errors.push_back({0, ProblemCode::must_staple_missing,
                        "certificate '" + r.presented.front().display_name() +
                            "' requires a stapled OCSP response (TLS Feature must-staple), but "
                            "the server sent none; clients that enforce must-staple reject it"});
  }
}

// The profile's rules over the chosen path, then what the server sends, then the verdict.
void conclude(Run& r) {
  Verification& v = r.v;
  apply_profile(v, r.findings, r.options.profile, r.name_by_cn);
  v.chain_issues = find_chain_issues(r.presented, r.handles, r.path->chain.get(), r.now);
  for (const auto& e : v.errors) {
    if (e.code == ProblemCode::missing_intermediate) {
      v.chain_issues.push_back({ProblemCode::missing_intermediate, std::nullopt, e.reason});
    }
  }
  v.verdict = verdict_from(v);
  v.ok = v.verdict == Verdict::valid;
}

}  // namespace

Result<Verification> verify_with_store(const std::vector<Certificate>& presented,
                                       const VerifyOptions& options, const TrustStore& trust,
                                       const std::vector<X509*>& parsed) {
  if (presented.empty()) return fail(Errc::invalid_argument, "no certificate to verify");
  Run r(presented, options, trust);
  r.v.trust_store = trust.description;
  GETCERT_TRY(parse_presented(r, parsed));
  GETCERT_TRY(build_paths(r));
  GETCERT_TRY(complete_via_aia(r));
  check_key_usages(r);  // a purpose fact, as OpenSSL's wrong_purpose is: before judge_path
  judge_path(r);
  GETCERT_TRY(assemble_verified_chain(r));
  check_names(r);
  note_crl_coverage(r);
  check_pins_and_staple(r);
  if (r.v.trusted) {
    check_revocation_evidence(r.v, options, r.path->chain.get(), r.now, r.network_deadline);
  }
  conclude(r);
  return std::move(r.v);
}

}  // namespace detail
}  // namespace getcert
