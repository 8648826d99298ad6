#include "render_csv.hpp"

#include <algorithm>
#include <vector>

#include "getcert/text.hpp"

namespace getcert::cli {
namespace {

std::string join_row(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += cells[i];
  }
  return out + "\r\n";
}

// The problem codes of a failed verification, space-separated, each kind once.
std::string problem_codes(const Verification& v) {
  std::vector<std::string_view> codes;
  std::string out;
  for (const auto& problem : v.errors) {
    const std::string_view code = to_string(problem.code);
    if (std::find(codes.begin(), codes.end(), code) != codes.end()) continue;
    codes.push_back(code);
    out += (out.empty() ? "" : " ") + std::string(code);
  }
  return out;
}

}  // namespace

std::string csv_text_cell(std::string_view text) {
  std::string cell = valid_utf8(std::string(text));
  bool quote = false;
  if (!cell.empty()) {
    const char first = cell.front();
    if (first == '=' || first == '+' || first == '-' || first == '@' || first == '\t' ||
        first == '\r') {
      cell.insert(cell.begin(), '\'');
      quote = true;
    }
  }
  std::string out;
  out.reserve(cell.size() + 2);
  for (const char c : cell) {
    if (c == '"') out += '"';  // RFC 4180 2.7: a quote inside a quoted cell is doubled
    if (c == '"' || c == ',' || c == '\r' || c == '\n') quote = true;
    out += c;
  }
  return quote ? '"' + out + '"' : out;
}

constexpr std::size_t kColumns = 16;  // without the --baseline columns

std::string csv_header(bool with_change) {
  std::vector<std::string> names{"input",     "host",       "port",      "address",
                                 "ok",        "verdict",    "problems",  "tls_version",
                                 "cipher",    "subject_cn", "issuer_cn", "not_before",
                                 "not_after", "days_left",  "sha256",    "error"};
  if (with_change) names.insert(names.end(), {"change", "previous_sha256"});
  return join_row(names);
}

std::string csv_gone_row(const GoneEntry& gone) {
  std::vector<std::string> cells(kColumns);
  cells[0] = csv_text_cell(gone.input);
  cells[4] = "false";
  cells.emplace_back(to_string(ChangeKind::gone));
  cells.push_back(csv_text_cell(gone.previous_sha256));
  return join_row(cells);
}

std::string csv_row(const std::string& input, const Endpoint& endpoint,
                    const Result<FetchResult>& result, std::int64_t now, const Change* change) {
  const auto with_change = [change](std::vector<std::string>& cells) {
    if (change == nullptr) return;
    cells.emplace_back(to_string(change->kind));
    cells.push_back(csv_text_cell(change->previous_sha256));
  };
  // Cells getcert computed (numbers, true/false) need no escaping; every other goes through
  // csv_text_cell.
  std::vector<std::string> cells{csv_text_cell(input), csv_text_cell(endpoint.host),
                                 endpoint.port == 0 ? "" : std::to_string(endpoint.port)};
  if (!result) {
    cells.insert(cells.end(), {"", "false", "", "", "", "", "", "", "", "", "", "",
                               csv_text_cell(result.error().message)});
    with_change(cells);
    return join_row(cells);
  }
  const FetchResult& r = *result;
  const Verification& v = r.verification;
  cells.push_back(csv_text_cell(r.target.address));
  cells.emplace_back(v.ok ? "true" : "false");
  cells.push_back(csv_text_cell(to_string(v.verdict)));
  cells.push_back(csv_text_cell(problem_codes(v)));
  cells.push_back(csv_text_cell(r.tls.version));
  cells.push_back(csv_text_cell(r.tls.cipher));
  if (r.presented_chain.empty()) {
    cells.insert(cells.end(), {"", "", "", "", "", ""});
  } else {
    const Certificate& leaf = r.presented_chain.front();
    cells.push_back(csv_text_cell(leaf.subject_cn));
    cells.push_back(csv_text_cell(leaf.issuer_cn));
    cells.push_back(csv_text_cell(format_utc(leaf.not_before)));
    cells.push_back(csv_text_cell(format_utc(leaf.not_after)));
    // Numbers getcert computed (a negative one: expired) are data, never a formula.
    cells.push_back(std::to_string(leaf.days_left(now)));
    cells.push_back(csv_text_cell(leaf.sha256));
  }
  cells.emplace_back();  // no error
  with_change(cells);
  return join_row(cells);
}

}  // namespace getcert::cli
