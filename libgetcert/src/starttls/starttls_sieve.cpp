// ManageSieve STARTTLS (RFC 5804 2.2): the server greets with its capabilities and OK; a client
// sends STARTTLS only when "STARTTLS" is among them, and TLS starts after the server's OK.

#include <algorithm>
#include <string>

#include "internal/try.hpp"
#include "starttls/starttls_protocols.hpp"

namespace getcert::detail {
namespace {

Result<SieveResponse::Next> malformed() {
  return fail(Errc::malformed_input, "sent a ManageSieve response that does not parse");
}

// Where a line's trailing literal marker ("{12}", or "{12+}" as clients write it) starts, or
// npos when the line does not end with one.
std::size_t literal_marker(const std::string& line) {
  if (line.empty() || line.back() != '}') return std::string::npos;
  const auto open = line.rfind('{');
  if (open == std::string::npos || (open > 0 && line[open - 1] != ' ')) return std::string::npos;
  return open;
}

}  // namespace

Result<SieveResponse::Next> SieveResponse::add_line(const std::string& line) {
  if (status_ != Status::none) return Next::done;
  if (++pieces_ > kMaxReplyLines) {
    return fail(Errc::limit_exceeded,
                "sent more than " + std::to_string(kMaxReplyLines) + " lines before answering");
  }
  raw_ += line;
  const auto marker = literal_marker(line);
  if (marker == std::string::npos) {
    GETCERT_TRY(tokenize(line));
    return finish_line();
  }
  GETCERT_TRY(tokenize(std::string_view(line).substr(0, marker)));
  std::string_view digits = std::string_view(line).substr(marker + 1, line.size() - marker - 2);
  if (!digits.empty() && digits.back() == '+') digits.remove_suffix(1);
  if (digits.empty() || digits.size() > 10) return malformed();
  std::size_t size = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return malformed();
    size = size * 10 + static_cast<std::size_t>(c - '0');
  }
  // A literal is read whole before the line goes on: it gets the cap a line has.
  if (size > kMaxReplyLine) {
    return fail(Errc::limit_exceeded, "sent a ManageSieve literal longer than " +
                                          std::to_string(kMaxReplyLine / 1024) + " KiB");
  }
  literal_size_ = size;
  raw_ += "\r\n";
  return Next::literal;
}

Result<SieveResponse::Next> SieveResponse::add_literal(const std::string& octets) {
  if (status_ != Status::none) return Next::done;
  if (octets.size() != literal_size_) return malformed();
  if (++pieces_ > kMaxReplyLines) {
    return fail(Errc::limit_exceeded,
                "sent more than " + std::to_string(kMaxReplyLines) + " lines before answering");
  }
  tokens_.push_back({Token::Kind::string, octets});
  raw_ += octets;
  literal_size_ = 0;
  return Next::line;
}

bool SieveResponse::offers(std::string_view name) const {
  const std::string wanted = ascii_upper(name);
  return std::ranges::find(capabilities_, wanted) != capabilities_.end();
}

Result<void> SieveResponse::tokenize(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ') {
      ++i;
    } else if (c == '(' || c == ')') {
      tokens_.push_back({c == '(' ? Token::Kind::open : Token::Kind::close, std::string(1, c)});
      ++i;
    } else if (c == '"') {
      // quoted = DQUOTE *(SAFE-UTF8-CHAR / "\" QUOTED-SPECIALS) DQUOTE, on one line
      std::string value;
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '"') {
          closed = true;
          ++i;
          break;
        }
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        value += text[i++];
      }
      if (!closed) return tl::unexpected(malformed().error());
      tokens_.push_back({Token::Kind::string, std::move(value)});
    } else {
      const auto end = text.find_first_of(" ()\"", i);
      const std::size_t stop = end == std::string_view::npos ? text.size() : end;
      tokens_.push_back({Token::Kind::atom, std::string(text.substr(i, stop - i))});
      i = stop;
    }
  }
  return {};
}

Result<SieveResponse::Next> SieveResponse::finish_line() {
  if (tokens_.empty()) return malformed();
  const Token& first = tokens_.front();
  if (first.kind == Token::Kind::atom) {
    // response-oknobye = ("OK" / "NO" / "BYE") [SP "(" resp-code ")"] [SP string]
    const std::string word = ascii_upper(first.text);
    if (word == "OK") {
      status_ = Status::ok;
    } else if (word == "NO") {
      status_ = Status::no;
    } else if (word == "BYE") {
      status_ = Status::bye;
    } else {
      return malformed();
    }
    answer_ = std::move(raw_);
    raw_.clear();
    tokens_.clear();
    return Next::done;
  }
  // single-capability = capability-name [SP string]
  if (first.kind != Token::Kind::string) return malformed();
  capabilities_.push_back(ascii_upper(first.text));
  tokens_.clear();
  raw_.clear();
  return Next::line;
}

namespace {

// One whole response, its literals read as octets.
Result<SieveResponse> read_response(LineChannel& ch) {
  SieveResponse response;
  auto next = SieveResponse::Next::line;
  while (next != SieveResponse::Next::done) {
    Result<SieveResponse::Next> step = SieveResponse::Next::done;
    if (next == SieveResponse::Next::line) {
      GETCERT_TRY_ASSIGN(auto line, ch.read_line());
      step = response.add_line(line);
    } else {
      GETCERT_TRY_ASSIGN(auto octets, ch.read_bytes(response.literal_size()));
      step = response.add_literal(octets);
    }
    if (!step) return tl::unexpected(ch.peer_fault(step.error()));
    next = *step;
  }
  return response;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ' ';
    out += n;
  }
  return out;
}

}  // namespace

Result<void> sieve_starttls(LineChannel& ch) {
  GETCERT_TRY_ASSIGN(auto greeting, read_response(ch));
  if (greeting.status() != SieveResponse::Status::ok) {
    return tl::unexpected(starttls_refused(ch, greeting.answer()));
  }
  if (!greeting.offers("STARTTLS")) {
    return tl::unexpected(starttls_not_offered(ch, joined(greeting.capabilities())));
  }
  if (auto ok = ch.send("STARTTLS\r\n"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto go, read_response(ch));
  if (go.status() != SieveResponse::Status::ok) {
    return tl::unexpected(starttls_refused(ch, go.answer()));
  }
  return {};
}

}  // namespace getcert::detail
