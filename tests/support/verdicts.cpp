#include "support/verdicts.hpp"

#include <algorithm>

namespace getcert::test {

std::string codes(const Verification& v) {
  std::string out;
  for (const auto& e : v.errors) {
    out += "[" + std::to_string(e.depth) + "] " + std::string(to_string(e.code)) + ": " + e.reason +
           "\n";
  }
  return out;
}

bool has_code(const std::vector<VerifyProblem>& problems, ProblemCode code) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const VerifyProblem& p) { return p.code == code; });
}

bool has_warning(const Verification& v, ProblemCode code) {
  return std::any_of(v.warnings.begin(), v.warnings.end(),
                     [&](const VerifyNote& n) { return n.code == code; });
}

}  // namespace getcert::test
