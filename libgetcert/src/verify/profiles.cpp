#include "verify/profiles.hpp"

#include <algorithm>

namespace getcert::detail {
namespace {

std::string_view client_phrase(Profile p, bool name_by_cn) {
  switch (p) {
    case Profile::openssl:
      return name_by_cn ? "OpenSSL-based clients (gRPC C++, curl, Python) accept it through the CN"
                        : "OpenSSL-based clients (gRPC C++, curl, Python) accept it";
    case Profile::rfc5280:
      return "RFC 5280 allows it";
    case Profile::webpki:
      return "modern clients (Chromium, Firefox, Go, rustls-webpki) accept it";
    case Profile::cabf:
      return "it meets the Baseline Requirements' certificate profile";
  }
  return "";
}

}  // namespace

RuleLevel level_of(const RuleFinding& finding, Profile profile) {
  return rule_row(finding.code).weights.of(profile);
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
  for (const Profile other : kProfiles) {
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
