#pragma once

// `-o csv`: a header row, then one row per target (RFC 4180), for spreadsheets and inventories.
// Columns (README "CSV"): input, host, port, address, ok, verdict, problems, tls_version,
// cipher, subject_cn, issuer_cn, not_before, not_after, days_left, sha256, error.

#include <cstdint>
#include <string>
#include <string_view>

#include "baseline.hpp"
#include "getcert/fetch_many.hpp"

namespace getcert::cli {

// The header row, CRLF-terminated. With --baseline two columns follow: change, previous_sha256.
std::string csv_header(bool with_change = false);

// The row of one target, CRLF-terminated: the leaf is the first certificate the server
// presented; a target that failed has empty TLS and certificate cells and its error message.
std::string csv_row(const std::string& input, const Endpoint& endpoint,
                    const Result<FetchResult>& result, std::int64_t now,
                    const Change* change = nullptr);

// The row of a baseline entry no target of this run matched: input, change "gone" and the
// previous fingerprint; every other cell empty.
std::string csv_gone_row(const GoneEntry& gone);

// One cell of text that came from outside (a certificate, a peer, the target list): made valid
// UTF-8; a leading =, +, -, @, tab or CR, which spreadsheets read as a formula, gets a single
// quote before it (OWASP "CSV Injection"); quoted, with quotes doubled, when it holds a comma, a
// quote, a CR or an LF, or was neutralised.
std::string csv_text_cell(std::string_view text);

}  // namespace getcert::cli
