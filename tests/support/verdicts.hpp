#pragma once

// What verification tests assert on: the typed problem codes of a Verification, and its errors
// as readable lines for INFO() when a check fails.

#include <string>
#include <vector>

#include "getcert/verify.hpp"

namespace getcert::test {

// "[depth] code: reason\n" for each error of `v`.
std::string codes(const Verification& v);

bool has_code(const std::vector<VerifyProblem>& problems, ProblemCode code);
bool has_warning(const Verification& v, ProblemCode code);

}  // namespace getcert::test
