// NNTP STARTTLS (RFC 4642), with the capability discovery of RFC 3977: greeting 200 or 201,
// CAPABILITIES, and STARTTLS answered by 382.

#include <algorithm>
#include <optional>
#include <string>

#include "internal/try.hpp"
#include "starttls/starttls_protocols.hpp"

namespace getcert::detail {

Result<bool> NntpCapabilities::add(std::string line) {
  if (++lines_ > kMaxReplyLines) {
    return fail(Errc::limit_exceeded,
                "sent more than " + std::to_string(kMaxReplyLines) + " lines before answering");
  }
  if (line == ".") return true;
  if (line.rfind("..", 0) == 0) line.erase(0, 1);  // dot-stuffed
  const auto end = line.find_first_of(" \t");
  std::string label = ascii_upper(line.substr(0, end));
  if (!label.empty()) labels_.push_back(std::move(label));
  return false;
}

bool NntpCapabilities::offers(std::string_view label) const {
  const std::string wanted = ascii_upper(label);
  return std::ranges::find(labels_, wanted) != labels_.end();
}

std::string NntpCapabilities::labels() const {
  std::string out;
  for (const auto& l : labels_) {
    if (!out.empty()) out += ' ';
    out += l;
  }
  return out;
}

std::string nntp_code(const std::string& line) {
  if (line.size() < 3) return {};
  for (std::size_t i = 0; i < 3; ++i) {
    if (line[i] < '0' || line[i] > '9') return {};
  }
  if (line.size() > 3 && line[3] != ' ') return {};
  return line.substr(0, 3);
}

namespace {

// The capability list, or nullopt when the server predates RFC 3977 and does not know the
// command (500): it may still know STARTTLS, and its answer to it will tell.
Result<std::optional<NntpCapabilities>> capabilities(LineChannel& ch) {
  GETCERT_TRY(ch.send("CAPABILITIES\r\n"));
  GETCERT_TRY_ASSIGN(auto head, ch.read_line());
  if (nntp_code(head) != "101") return std::nullopt;
  NntpCapabilities list;
  GETCERT_TRY(read_reply(ch, list));
  return list;
}

bool is_greeting(const std::string& line) {
  const std::string code = nntp_code(line);
  return code == "200" || code == "201";  // posting allowed, or not
}

}  // namespace

Result<void> nntp_starttls(LineChannel& ch) {
  GETCERT_TRY_ASSIGN(auto greeting, ch.read_line());
  if (!is_greeting(greeting)) return tl::unexpected(starttls_refused(ch, greeting));
  auto caps = capabilities(ch);
  if (!caps) return tl::unexpected(caps.error());
  // A mode-switching server (RFC 3977 5.3) may offer STARTTLS only in reader mode.
  if (*caps && !(*caps)->offers("STARTTLS") && (*caps)->offers("MODE-READER")) {
    if (auto ok = ch.send("MODE READER\r\n"); !ok) return ok;
    GETCERT_TRY_ASSIGN(auto reader, ch.read_line());
    if (!is_greeting(reader)) return tl::unexpected(starttls_refused(ch, reader));
    caps = capabilities(ch);
    if (!caps) return tl::unexpected(caps.error());
  }
  if (*caps && !(*caps)->offers("STARTTLS")) {
    return tl::unexpected(starttls_not_offered(ch, (*caps)->labels()));
  }
  if (auto ok = ch.send("STARTTLS\r\n"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto go, ch.read_line());
  // 382: go ahead; 502: not available (or TLS already on), 580: cannot start TLS.
  if (nntp_code(go) != "382") return tl::unexpected(starttls_refused(ch, go));
  return {};
}

}  // namespace getcert::detail
