#pragma once

// What each rule finding weighs under each profile, and the verdict facts that follow.

#include <vector>

#include "getcert/verify.hpp"
#include "verify/rule_table.hpp"
#include "verify/rules.hpp"

namespace getcert::detail {

// What a finding weighs under a profile: its row of the rules table.
RuleLevel level_of(const RuleFinding& finding, Profile profile);

// Adds the findings to `v` as errors or warnings of the chosen profile, sets profile_ok and,
// when the verdict fails, accepted_by. Run after the OpenSSL facts are set (trusted,
// hostname_ok, pins, revocation); `name_by_cn`: the name matched only through the subject CN.
void apply_profile(Verification& v, const std::vector<RuleFinding>& findings, Profile chosen,
                   bool name_by_cn);

}  // namespace getcert::detail
