#pragma once

// Reads an XMPP server's stream (RFC 6120) far enough for STARTTLS: the stream header, then one
// top-level element at a time (<stream:features>, <proceed/>, <failure/>, <stream:error>),
// from bytes however they arrive. Pure (no I/O), so a server's bytes can be tested and fuzzed
// without a socket.
//
// Only the XML that XMPP allows is read: elements, attributes, character data, CDATA and the
// XML declaration (comments are skipped; DOCTYPEs and other markup are refused). Namespaces are
// resolved, so <features xmlns='http://etherx.jabber.org/streams'> and <stream:features> are
// the same element. What is kept of an element is what STARTTLS needs: its name, its direct
// children's names, and the text of a child named "text" (stream errors).

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "getcert/error.hpp"

namespace getcert::detail {

inline constexpr std::string_view kXmppStreamsNs = "http://etherx.jabber.org/streams";
inline constexpr std::string_view kXmppTlsNs = "urn:ietf:params:xml:ns:xmpp-tls";
inline constexpr std::string_view kXmppStreamErrorNs = "urn:ietf:params:xml:ns:xmpp-streams";

// Bytes in the stream header or in one top-level element, markup included. A server's stream
// features are a few hundred bytes (a long SASL mechanism list reaches 1-2 KiB): 16 KiB is far
// above any of them and bounds what a hostile server makes us hold.
inline constexpr std::size_t kMaxXmppElement = std::size_t{16} * 1024;
// Elements open at once. Stream features nest three or four deep.
inline constexpr std::size_t kMaxXmppDepth = 32;
// Direct children kept per element (stream features list about ten).
inline constexpr std::size_t kMaxXmppChildren = 100;

struct XmppName {
  std::string ns;     // namespace URI ("" when none is in scope)
  std::string local;  // name without its prefix

  bool is(std::string_view n, std::string_view l) const { return ns == n && local == l; }
};

struct XmppEvent {
  enum class Kind { stream_start, element, stream_end };
  Kind kind = Kind::element;
  XmppName name;
  std::string version;             // stream_start: the header's version attribute
  std::vector<XmppName> children;  // element: its direct children, in order
  std::string text;                // element: character data of a direct child named "text"
};

class XmppReader {
 public:
  // Takes bytes up to the end of the next event (the stream header's start tag, a complete
  // top-level element, or the stream's end tag) and returns how many it took; the rest belongs
  // to what follows. Takes nothing while an event waits to be popped. Fails with not_tls when
  // the peer does not open an XMPP stream (another protocol), malformed_input (not XML) or
  // limit_exceeded, phrased to follow the peer's name ("sent malformed XML (...)").
  Result<std::size_t> take(std::string_view bytes);
  bool complete() const noexcept { return ready_; }
  // The completed event; reading goes on after it.
  XmppEvent pop();

 private:
  enum class Mode { text, markup };
  struct Open {
    std::string qname;                                     // as written, for the end tag
    std::vector<std::pair<std::string, std::string>> nss;  // prefix -> URI declared here
  };

  Result<void> feed(std::string_view rest);  // rest[0] is the next byte
  Result<void> end_markup();
  Result<void> start_tag(std::string_view inner);
  Result<void> end_tag(std::string_view inner);
  Result<XmppName> resolve(std::string_view qname, const Open& innermost) const;
  void add_text(std::string_view text);

  Mode mode_ = Mode::text;
  std::string markup_;  // the current "<...>" so far
  char quote_ = 0;      // inside an attribute value quoted with this
  std::vector<Open> open_;
  std::size_t event_bytes_ = 0;
  bool in_text_child_ = false;
  bool ready_ = false;
  XmppEvent event_;
};

}  // namespace getcert::detail
