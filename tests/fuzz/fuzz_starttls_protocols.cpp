// Fuzz target: the readers of NNTP, ManageSieve and IRC replies before TLS
// (starttls/starttls_protocols.hpp), fed what a server sends in chunks of varying size: NNTP
// capability lists, ManageSieve responses with literals, IRC lines with PINGs to answer.
//
// Input: 2 bytes seeding the chunk sizes, then the bytes the "server" sends.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "invariant.hpp"
#include "net/line_channel.hpp"
#include "starttls/starttls_protocols.hpp"

using getcert::fuzz::require;
namespace d = getcert::detail;

namespace {

bool has_control(std::string_view text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return true;
  }
  return false;
}

// Splits `wire` into lines as LineChannel::read_line does, from chunks of seeded sizes.
class Lines {
 public:
  Lines(std::string_view wire, std::uint32_t seed) : wire_(wire), seed_(seed) {}

  // The next line, or false at the end of the input or past the line cap.
  bool next(std::string& line) {
    while (off_ < wire_.size()) {
      seed_ = seed_ * 1103515245U + 12345U;
      const std::string_view chunk = wire_.substr(off_, 1 + (seed_ >> 16) % 61);
      auto took = assembler_.take(chunk);
      if (!took) return false;
      require(*took >= 1 && *took <= chunk.size(), "the assembler takes what it was given");
      off_ += *took;
      if (assembler_.complete()) {
        line = assembler_.pop();
        return true;
      }
    }
    return false;
  }

  // The next `count` octets as they stand (a ManageSieve literal), or false when too few are
  // left.
  bool octets(std::size_t count, std::string& out) {
    if (wire_.size() - off_ < count) return false;
    out = std::string(wire_.substr(off_, count));
    off_ += count;
    return true;
  }

 private:
  std::string_view wire_;
  std::uint32_t seed_;
  std::size_t off_ = 0;
  d::LineAssembler assembler_;
};

// Hands `on_line` each line of `wire` (cut into reads as `seed` picks) until it returns false.
template <typename OnLine>
void for_each_line(std::string_view wire, std::uint32_t seed, OnLine on_line) {
  Lines lines(wire, seed);
  std::string line;
  while (lines.next(line) && on_line(line)) {
  }
}

void nntp(std::string_view wire, std::uint32_t seed) {
  d::NntpCapabilities caps;
  for_each_line(wire, seed, [&](const std::string& line) {
    const std::string code = d::nntp_code(line);
    require(code.empty() || (code.size() == 3 && line.rfind(code, 0) == 0), "codes are 3 digits");
    auto done = caps.add(line);
    return done && !*done;
  });
  require(caps.labels().find('\n') == std::string::npos, "labels are one line");
  static_cast<void>(caps.offers("STARTTLS"));
}

void sieve(std::string_view wire, std::uint32_t seed) {
  Lines lines(wire, seed);
  d::SieveResponse response;
  auto next = d::SieveResponse::Next::line;
  while (next != d::SieveResponse::Next::done) {
    std::string piece;
    getcert::Result<d::SieveResponse::Next> step = d::SieveResponse::Next::done;
    if (next == d::SieveResponse::Next::line) {
      if (!lines.next(piece)) return;
      step = response.add_line(piece);
    } else {
      require(response.literal_size() <= d::kMaxReplyLine, "literals are capped");
      if (!lines.octets(response.literal_size(), piece)) return;
      step = response.add_literal(piece);
    }
    if (!step) {
      const auto code = step.error().code;
      require(code == getcert::Errc::malformed_input || code == getcert::Errc::limit_exceeded,
              "ManageSieve failures are malformed_input or limit_exceeded");
      return;
    }
    next = *step;
  }
  require(response.status() != d::SieveResponse::Status::none, "a complete response has a status");
  require(!response.answer().empty(), "a complete response has its line");
  require(response.capabilities().size() < static_cast<std::size_t>(d::kMaxReplyLines),
          "capabilities are capped");
  require(!has_control(getcert::quote_untrusted(response.answer(), d::kPeerQuoteMax)),
          "answers are quoted terminal-safe");
}

void irc(std::string_view wire, std::uint32_t seed) {
  d::IrcStartTlsAnswer answer;
  for_each_line(wire, seed, [&](const std::string& line) {
    const d::IrcMessage msg = d::parse_irc_message(line);
    require(msg.command.find(' ') == std::string::npos, "commands are one word");
    for (std::size_t i = 0; i + 1 < msg.params.size(); ++i) {
      require(msg.params[i].find(' ') == std::string::npos, "middle parameters are one word");
    }
    auto done = answer.add(line);
    if (auto pong = answer.take_pong()) {
      // What goes back to the server is exactly one line of ours.
      require(pong->rfind("PONG :", 0) == 0, "a pong is a PONG");
      require(pong->size() >= 8 && pong->substr(pong->size() - 2) == "\r\n",
              "a pong ends its line");
      const std::string_view token(pong->data() + 6, pong->size() - 8);
      require(token.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos,
              "a pong's token cannot end or break the line");
    }
    if (!done) return false;
    if (*done) {
      require(!answer.ok() || msg.command == "670", "only 670 starts TLS");
      return false;
    }
    require(!answer.ok(), "no answer yet");
    return true;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint32_t seed = (static_cast<std::uint32_t>(data[0]) << 8) | data[1];
  const std::string_view wire(reinterpret_cast<const char*>(data + 2), size - 2);
  nntp(wire, seed);
  sieve(wire, seed);
  irc(wire, seed);
  return 0;
}
