// The rules table: every ProblemCode has its own row, and docs/verification.md's weights table
// is the one the table generates (a change of weight without its docs fails here).

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "getcert/verify.hpp"
#include "verify/rule_table.hpp"

using getcert::ProblemCode;
using getcert::Profile;
using getcert::detail::all_problem_codes;
using getcert::detail::rule_row;
using getcert::detail::RuleKind;

namespace {

constexpr std::string_view kBegin = "<!-- rules-table:begin";
constexpr std::string_view kEnd = "<!-- rules-table:end -->";

// The markdown table of the profile rules, as docs/verification.md must hold it.
std::string generated_table() {
  std::ostringstream out;
  out << "| code | rule | section | webpki | openssl | rfc5280 | cabf |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (const ProblemCode code : all_problem_codes()) {
    const auto& row = rule_row(code);
    if (row.kind != RuleKind::rule) continue;
    out << "| `" << row.name << "` | " << row.summary << " | " << row.section << " |";
    for (const Profile p : getcert::detail::kProfiles) {
      out << ' ' << getcert::detail::to_string(row.weights.of(p)) << " |";
    }
    out << '\n';
  }
  return out.str();
}

std::string docs_table() {
  std::ifstream in(GETCERT_VERIFICATION_MD);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const auto begin = s.find(kBegin);
  if (begin == std::string::npos) return {};
  const auto body = s.find('\n', begin) + 1;
  const auto end = s.find(kEnd, body);
  return end == std::string::npos ? std::string() : s.substr(body, end - body);
}

}  // namespace

TEST_CASE("every problem code has a row of its own, named as to_string() names it", "[verify]") {
  std::set<std::string_view> names;
  for (const ProblemCode code : all_problem_codes()) {
    const auto& row = rule_row(code);
    INFO("code " << static_cast<int>(code));
    CHECK_FALSE(row.name.empty());
    CHECK(getcert::to_string(code) == row.name);
    CHECK(names.insert(row.name).second);
    CHECK(row.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") ==
          std::string_view::npos);
    CHECK_FALSE(row.summary.empty());
  }
  CHECK(names.size() == all_problem_codes().size());
}

TEST_CASE("a profile rule weighs something under each profile; path errors fail them all",
          "[verify]") {
  for (const ProblemCode code : all_problem_codes()) {
    const auto& row = rule_row(code);
    INFO(row.name);
    if (row.kind == RuleKind::rule) CHECK_FALSE(row.section.empty());
    for (const Profile p : getcert::detail::kProfiles) {
      if (row.kind == RuleKind::path) {
        CHECK(row.weights.of(p) == getcert::detail::RuleLevel::error);
      }
      // cabf is what a CA must issue: nothing a modern client refuses may pass it. (It follows
      // RFC 5280 too, except where the BRs make an explicit exception:
      // name_constraints_not_critical.) The exceptions: rules measured from what a client cannot do
      // where the BRs and RFC 5280 allow it (browsers' keys and depth, Go counting self-issued
      // intermediates).
      if (row.kind == RuleKind::rule && row.weights.webpki == getcert::detail::RuleLevel::error &&
          code != ProblemCode::too_many_intermediates &&
          code != ProblemCode::path_length_self_issued) {
        CHECK(row.weights.cabf == getcert::detail::RuleLevel::error);
      }
      if (row.kind == RuleKind::rule && row.weights.rfc5280 == getcert::detail::RuleLevel::error &&
          code != ProblemCode::name_constraints_not_critical) {
        CHECK(row.weights.cabf == getcert::detail::RuleLevel::error);
      }
    }
  }
}

TEST_CASE("profile names read back", "[verify]") {
  for (const Profile p : getcert::detail::kProfiles) {
    CHECK(getcert::profile_from_string(getcert::to_string(p)) == p);
  }
  CHECK_FALSE(getcert::profile_from_string("WebPKI"));
  CHECK_FALSE(getcert::profile_from_string(""));
}

TEST_CASE("docs/verification.md holds the weights table the rules table generates", "[verify]") {
  const std::string want = generated_table();
  const std::string have = docs_table();
  if (have != want) {
    // Catch wraps long lines; the table goes to a file to paste from.
    std::ofstream("rules-table.md") << want;
  }
  INFO("replace the block between '" << kBegin << "' and '" << kEnd
                                     << "' in docs/verification.md with rules-table.md, "
                                        "written to this test's working directory");
  CHECK(have == want);
}
