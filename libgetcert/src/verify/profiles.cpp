#include "verify/profiles.hpp"

#include <algorithm>

namespace getcert::detail {
namespace {

using L = RuleLevel;

struct Weights {
  L webpki;
  L openssl;
  L rfc5280;
};

// One row per rule: why each weight is what it is lives in docs (the policy table). The
// openssl profile is what OpenSSL 3 clients accept, so nothing here fails it; it warns where
// modern clients (Go, rustls, Chromium, pyca) reject the chain. webpki fails what pyca and Go,
// or the browsers, reject; rules only the strict reading enforces are webpki warnings.
Weights weights(const RuleFinding& f) {
  switch (f.code) {
    case ProblemCode::no_subject_alt_name:
      return {L::error, L::none, L::error};  // openssl: the cn_fallback warning says it
    case ProblemCode::cn_not_in_sans:
    case ProblemCode::cn_ip_not_canonical:
    case ProblemCode::dns_name_underscore:
    case ProblemCode::name_constraints_not_critical:
    case ProblemCode::leaf_missing_eku:
    case ProblemCode::root_has_eku:
    case ProblemCode::rsa_modulus_not_multiple_of_8:
    case ProblemCode::root_basic_constraints_not_critical:
    case ProblemCode::missing_subject_key_id:
    case ProblemCode::root_aki_issuer_serial:
    case ProblemCode::root_aki_without_key_id:
    case ProblemCode::bad_serial_number:
      return {L::warning, L::none, L::error};
    case ProblemCode::missing_authority_key_id:
      // pyca requires it in the leaf; Go does not look. Intermediates: the strict reading only.
      return f.depth == 0 ? Weights{L::error, L::warning, L::error}
                          : Weights{L::warning, L::none, L::error};
    case ProblemCode::leaf_is_ca:
      // RFC 5280 lets a CA certificate be an end entity; the BR, rustls and pyca do not.
      return {L::error, L::warning, L::warning};
    case ProblemCode::leaf_any_eku:
    case ProblemCode::eku_critical:
      // OpenSSL already refuses anyExtendedKeyUsage for a purpose (wrong_purpose).
      return {L::error, L::none, L::error};
    case ProblemCode::wildcard_public_suffix:
    case ProblemCode::name_constraints_in_leaf:
    case ProblemCode::excluded_wildcard:
    case ProblemCode::invalid_name_constraint:
    case ProblemCode::empty_name_constraints:
    case ProblemCode::v1_certificate:
    case ProblemCode::leaf_key_cert_sign:
    case ProblemCode::dsa_key:
    case ProblemCode::empty_subject_san_not_critical:
    case ProblemCode::malformed_aia:
    case ProblemCode::root_basic_constraints_missing:  // Go and pyca refuse such an anchor
      return {L::error, L::warning, L::error};
    default:  // budget_exhausted and every RFC 5280 path error: fatal under every profile
      return {L::error, L::error, L::error};
  }
}

std::string_view client_phrase(Profile p, bool name_by_cn) {
  switch (p) {
    case Profile::openssl:
      return name_by_cn ? "OpenSSL-based clients (gRPC C++, curl, Python) accept it through the CN"
                        : "OpenSSL-based clients (gRPC C++, curl, Python) accept it";
    case Profile::rfc5280:
      return "RFC 5280 allows it";
    case Profile::webpki:
      return "modern verifiers (Go, rustls-webpki, Chromium, pyca) accept it";
  }
  return "";
}

}  // namespace

RuleLevel level_of(const RuleFinding& finding, Profile profile) {
  const Weights w = weights(finding);
  switch (profile) {
    case Profile::webpki:
      return w.webpki;
    case Profile::openssl:
      return w.openssl;
    case Profile::rfc5280:
      return w.rfc5280;
  }
  return w.webpki;
}

void apply_profile(Verification& v, const std::vector<RuleFinding>& findings, Profile chosen,
                   bool name_by_cn) {
  v.profile = chosen;
  // The OpenSSL facts, CN fallback included: what the openssl profile decides on.
  const bool openssl_ok = v.trusted && v.hostname_ok && v.pins_ok && v.revocation_ok && v.staple_ok;
  std::vector<RuleFinding> all = findings;
  const bool has_no_san = std::any_of(all.begin(), all.end(), [](const RuleFinding& f) {
    return f.code == ProblemCode::no_subject_alt_name;
  });
  if (name_by_cn && !has_no_san) {
    // A client certificate or purpose "any": the name rule did not run, but the name was asked.
    all.push_back({0, ProblemCode::no_subject_alt_name,
                   "the leaf (depth 0) matched the name only through its CN: it has no "
                   "subjectAltName (RFC 6125 6.4.4)"});
  }
  auto fails = [&](Profile p) {
    return std::any_of(all.begin(), all.end(),
                       [&](const RuleFinding& f) { return level_of(f, p) == RuleLevel::error; });
  };
  for (const auto& f : all) {
    const RuleLevel level = level_of(f, chosen);
    if (level == RuleLevel::error) {
      v.profile_ok = false;
      v.errors.push_back({f.depth, f.code, f.reason});
    } else if (level == RuleLevel::warning) {
      v.warnings.push_back({f.code, f.depth, f.reason});
    }
  }
  if (name_by_cn && chosen != Profile::openssl) v.hostname_ok = false;
  const bool chosen_ok = openssl_ok && v.profile_ok && (chosen == Profile::openssl || !name_by_cn);
  if (chosen_ok) return;
  for (const Profile other : {Profile::webpki, Profile::openssl, Profile::rfc5280}) {
    if (other == chosen || !openssl_ok || fails(other)) continue;
    if (name_by_cn && other != Profile::openssl) continue;
    // The first rule that fails the chosen profile and not this one says why they differ.
    const auto why = std::find_if(all.begin(), all.end(), [&](const RuleFinding& f) {
      return level_of(f, chosen) == RuleLevel::error && level_of(f, other) != RuleLevel::error;
    });
    if (why == all.end()) continue;
    v.accepted_by.push_back({other, "rejected under " + std::string(to_string(chosen)) + ": " +
                                        why->reason + "; " +
                                        std::string(client_phrase(other, name_by_cn)) +
                                        ": --profile " + std::string(to_string(other))});
  }
}

}  // namespace getcert::detail
