// IRC STARTTLS (the IRCv3 tls extension): before registering, the client sends STARTTLS; the
// server answers 670 (RPL_STARTTLS) and TLS starts, or 691 (ERR_STARTTLS). Servers talk first
// ("NOTICE * :*** Looking up your hostname...") and may PING a client that has not
// registered, so the answer is looked for among such lines.

#include <string>

#include "internal/try.hpp"
#include "starttls/starttls_protocols.hpp"

namespace getcert::detail {

IrcMessage parse_irc_message(const std::string& line) {
  IrcMessage msg;
  std::size_t pos = 0;
  const auto skip_spaces = [&] {
    while (pos < line.size() && line[pos] == ' ') ++pos;
  };
  const auto word = [&] {
    const auto end = line.find(' ', pos);
    const std::size_t stop = end == std::string::npos ? line.size() : end;
    std::string out = line.substr(pos, stop - pos);
    pos = stop;
    return out;
  };
  if (pos < line.size() && line[pos] == '@') static_cast<void>(word());  // message tags
  skip_spaces();
  if (pos < line.size() && line[pos] == ':') {
    ++pos;
    msg.prefix = word();
  }
  skip_spaces();
  msg.command = ascii_upper(word());
  for (;;) {
    skip_spaces();
    if (pos >= line.size()) break;
    if (line[pos] == ':') {
      msg.params.push_back(line.substr(pos + 1));  // trailing: the rest, spaces included
      break;
    }
    msg.params.push_back(word());
  }
  return msg;
}

namespace {

// 400-599: ERR_* numerics (RFC 2812 5.2), 691 (ERR_STARTTLS) among them.
bool is_error_numeric(const std::string& command) {
  if (command.size() != 3) return false;
  for (const char c : command) {
    if (c < '0' || c > '9') return false;
  }
  return command[0] == '4' || command[0] == '5' || command == "691";
}

}  // namespace

Result<bool> IrcStartTlsAnswer::add(std::string line) {
  if (++lines_ > kMaxReplyLines) {
    return fail(Errc::limit_exceeded,
                "sent more than " + std::to_string(kMaxReplyLines) + " lines before answering");
  }
  last_ = std::move(line);
  const IrcMessage msg = parse_irc_message(last_);
  if (msg.command == "PING") {
    // Echo the token; a stray CR or NUL in it must not end or corrupt our line.
    std::string token = msg.params.empty() ? std::string() : msg.params.back();
    std::erase_if(token, [](char c) { return c == '\r' || c == '\0'; });
    pong_ = "PONG :" + token + "\r\n";
    return false;
  }
  if (msg.command == "670") {
    ok_ = true;
    return true;
  }
  return msg.command == "ERROR" || is_error_numeric(msg.command);
}

std::optional<std::string> IrcStartTlsAnswer::take_pong() {
  std::optional<std::string> out = std::move(pong_);
  pong_.reset();
  return out;
}

Result<void> irc_starttls(LineChannel& ch) {
  if (auto ok = ch.send("STARTTLS\r\n"); !ok) return ok;
  IrcStartTlsAnswer answer;
  for (;;) {
    GETCERT_TRY_ASSIGN(auto line, ch.read_line());
    auto complete = answer.add(std::move(line));
    if (!complete) return tl::unexpected(ch.peer_fault(complete.error()));
    if (auto pong = answer.take_pong()) {
      if (auto ok = ch.send(*pong); !ok) return ok;
    }
    if (*complete) break;
  }
  if (!answer.ok()) return tl::unexpected(starttls_refused(ch, answer.last()));
  return {};
}

}  // namespace getcert::detail
