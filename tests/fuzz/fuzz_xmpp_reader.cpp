// Fuzz target: the XMPP stream reader of STARTTLS (starttls/xmpp_reader.hpp), fed a server's
// bytes in chunks of varying size, as they arrive from a socket.
//
// Input: 2 bytes seeding the chunk sizes, then the bytes the "server" sends.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "invariant.hpp"
#include "net/replies.hpp"
#include "starttls/xmpp_reader.hpp"

using getcert::fuzz::require;

namespace {

// Quoted peer text is one terminal-safe line.
void check_quoted(const std::string& text) {
  for (const char c : getcert::quote_untrusted(text, getcert::detail::kPeerQuoteMax)) {
    const auto u = static_cast<unsigned char>(c);
    require(u >= 0x20 && u != 0x7F, "quoted XMPP text is terminal-safe");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using getcert::detail::XmppEvent;
  if (size < 2) return 0;
  std::uint32_t seed = (static_cast<std::uint32_t>(data[0]) << 8U) | data[1];
  const std::string_view wire(reinterpret_cast<const char*>(data + 2), size - 2);

  getcert::detail::XmppReader reader;
  int events = 0;
  bool ended = false;
  std::size_t off = 0;
  while (off < wire.size() && !ended) {
    seed = seed * 1103515245U + 12345U;
    const std::size_t piece = 1 + (seed >> 16U) % 97;
    const std::string_view chunk = wire.substr(off, piece);
    auto took = reader.take(chunk);
    if (!took) return 0;  // refused input ends the exchange
    require(*took <= chunk.size(), "the reader takes no more than it is given");
    require(*took >= 1 || reader.complete(), "the reader takes a byte unless an event waits");
    off += *took;
    if (!reader.complete()) {
      require(*took == chunk.size(), "an incomplete event takes the whole chunk");
      continue;
    }
    require(reader.take(chunk.substr(*took)).value_or(1) == 0,
            "nothing is taken while an event waits");
    const XmppEvent e = reader.pop();
    require((events == 0) == (e.kind == XmppEvent::Kind::stream_start),
            "the stream header comes first, and once");
    require(e.children.size() <= getcert::detail::kMaxXmppChildren, "children are capped");
    require(e.text.size() <= getcert::detail::kMaxXmppElement * 4, "text is bounded");
    check_quoted(e.text);
    check_quoted(e.name.local);
    ended = e.kind == XmppEvent::Kind::stream_end;
    ++events;
  }
  return 0;
}
