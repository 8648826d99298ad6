// Fuzz target: what reads the plain-text replies before TLS (STARTTLS preambles, proxy CONNECT
// answers): lines assembled from chunks of varying size, fed to the SMTP multi-line, IMAP
// tagged and proxy reply parsers, and quoted the way error messages quote them.
//
// Input: 2 bytes seeding the chunk sizes, then the bytes the "server" sends.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "net/line_channel.hpp"
#include "net/replies.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Quoted peer text is one terminal-safe line.
void check_quoted(const std::string& line) {
  const std::string q = getcert::quote_untrusted(line, getcert::detail::kPeerQuoteMax);
  for (const char c : q) {
    const auto u = static_cast<unsigned char>(c);
    check(u >= 0x20 && u != 0x7F);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::uint32_t seed = (static_cast<std::uint32_t>(data[0]) << 8) | data[1];
  const std::string_view wire(reinterpret_cast<const char*>(data + 2), size - 2);

  getcert::detail::LineAssembler assembler;
  getcert::detail::MultilineReply smtp;
  getcert::detail::TaggedReply imap("g1");
  getcert::detail::ProxyReply proxy;
  bool smtp_open = true;
  bool imap_open = true;
  bool proxy_open = true;
  int lines = 0;
  std::size_t off = 0;
  while (off < wire.size()) {
    seed = seed * 1103515245U + 12345U;
    const std::size_t piece = 1 + (seed >> 16) % 61;
    const std::string_view chunk = wire.substr(off, piece);
    auto took = assembler.take(chunk);
    if (!took) return 0;  // an overlong line ends the exchange
    check(*took >= 1 && *took <= chunk.size());
    off += *took;
    if (!assembler.complete()) continue;
    const std::string line = assembler.pop();
    check(line.size() <= getcert::detail::kMaxReplyLine);
    check_quoted(line);
    ++lines;
    if (smtp_open) {
      auto done = smtp.add(line);
      smtp_open = done && !*done;
      check(done || lines > getcert::detail::kMaxReplyLines);
    }
    if (imap_open) {
      auto done = imap.add(line);
      imap_open = done && !*done;
      if (done && *done) check(imap.last().rfind("g1 ", 0) == 0);
    }
    if (proxy_open) {
      auto done = proxy.add(line);
      proxy_open = done && !*done;
      if (done && *done) {
        const std::string code = proxy.code();
        check(code.empty() || code.size() == 3);
        check(!proxy.established() || code[0] == '2');
        check_quoted(proxy.status_line());
      }
    }
  }
  return 0;
}
