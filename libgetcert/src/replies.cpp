#include "detail/replies.hpp"

#include "getcert/text.hpp"

namespace getcert::detail {
namespace {

Result<bool> too_many_lines() {
  return fail(Errc::limit_exceeded,
              "sent more than " + std::to_string(kMaxReplyLines) + " lines before answering");
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<bool> MultilineReply::add(std::string line) {
  if (++lines_ > kMaxReplyLines) return too_many_lines();
  last_ = std::move(line);
  return last_.size() < 4 || last_[3] != '-';
}

Result<bool> TaggedReply::add(std::string line) {
  if (++lines_ > kMaxReplyLines) return too_many_lines();
  last_ = std::move(line);
  return last_.rfind(tag_ + " ", 0) == 0;
}

bool TaggedReply::ok() const noexcept { return last_.rfind(tag_ + " OK", 0) == 0; }

Result<bool> ProxyReply::add(std::string line) {
  if (++lines_ > kMaxReplyLines) return too_many_lines();
  if (lines_ == 1) {
    status_line_ = std::move(line);
    return false;
  }
  return line.empty();  // the headers end with an empty line; after it the tunnel is open
}

std::string ProxyReply::code() const {
  // "HTTP/1.1 200 Connection established"
  if (status_line_.rfind("HTTP/", 0) != 0) return {};
  const auto space = status_line_.find(' ');
  if (space == std::string::npos || space + 4 > status_line_.size()) return {};
  std::string code = status_line_.substr(space + 1, 3);
  for (const char c : code) {
    if (!is_digit(c)) return {};
  }
  if (space + 4 < status_line_.size() && status_line_[space + 4] != ' ') return {};
  return code;
}

bool ProxyReply::established() const {
  const std::string c = code();
  return !c.empty() && c[0] == '2';
}

std::string quote_peer(const std::string& text, std::size_t max) {
  const bool cut = text.size() > max;
  return "\"" + escape_untrusted(std::string_view(text).substr(0, max)) + (cut ? "..." : "") + "\"";
}

}  // namespace getcert::detail
