#pragma once

// The rules table: one row per ProblemCode, the single place that says what a code is called,
// where its rule comes from, what kind of problem it is and what it weighs under each profile.
// to_string(ProblemCode), the profiles' weights and the table in docs/verification.md are all
// read from it. rule_row() is a switch without a default, so a code without a row does not
// compile (-Werror=switch).

#include <array>
#include <string_view>

#include "getcert/verify.hpp"

namespace getcert::detail {

enum class RuleLevel { none, warning, error };

// How a code reaches a Verification.
enum class RuleKind {
  path,         // a path validation error (RFC 5280 6.1, the name, pins, revocation): fatal
  warning,      // a warning of its own, never an error
  chain_issue,  // about what the server sends, never an error
  rule,         // a profile rule: its weight depends on the profile
};

// What a rule weighs under each profile, in the order of the Profile enum.
struct Weights {
  RuleLevel webpki = RuleLevel::error;
  RuleLevel openssl = RuleLevel::error;
  RuleLevel rfc5280 = RuleLevel::error;
  RuleLevel cabf = RuleLevel::error;
  RuleLevel of(Profile p) const;
};

struct RuleRow {
  std::string_view name;  // the stable snake_case code
  RuleKind kind = RuleKind::path;
  std::string_view section;  // RFC 5280 / BR section, or who sets the rule
  std::string_view summary;  // the rule in a few words (the docs table; reasons say more)
  Weights weights;
};

const RuleRow& rule_row(ProblemCode code) noexcept;

// Every profile, in the order their notes are computed (accepted_by).
inline constexpr std::array<Profile, 4> kProfiles = {Profile::webpki, Profile::openssl,
                                                     Profile::rfc5280, Profile::cabf};

// Every code, in enum order; the docs table and the table's tests walk it.
const std::array<ProblemCode, 77>& all_problem_codes() noexcept;

std::string_view to_string(RuleLevel level) noexcept;  // "E", "W", "-"

}  // namespace getcert::detail
