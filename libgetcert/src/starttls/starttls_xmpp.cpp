// XMPP STARTTLS (RFC 6120 5.4): open a stream to the domain, find <starttls/> among the stream
// features, ask for it, and expect <proceed/>.

#include "internal/try.hpp"
#include "net/line_channel.hpp"
#include "net/replies.hpp"
#include "starttls/starttls_protocols.hpp"
#include "starttls/xmpp_reader.hpp"

namespace getcert::detail {
namespace {

// An element name from the server, escaped for a message, without quotes: it is shown in <...>.
std::string escape_name(const std::string& name) {
  const std::string q = quote_untrusted(name, 40);
  return q.substr(1, q.size() - 2);
}

Result<XmppEvent> next_event(LineChannel& ch, XmppReader& reader) {
  auto read = ch.read_into([&reader](std::string_view bytes) { return reader.take(bytes); },
                           [&reader] { return reader.complete(); });
  if (!read) return tl::unexpected(read.error());
  return reader.pop();
}

Error declined(const LineChannel& ch, const std::string& what) {
  return {Errc::not_tls, ch.peer() + " " + what};
}

// "host-unknown", or "host-unknown: \"no such domain\"" with the error's text.
std::string stream_error_text(const XmppEvent& e) {
  std::string condition;
  for (const auto& child : e.children) {
    if (child.ns == kXmppStreamErrorNs && child.local != "text") {
      condition = child.local;
      break;
    }
  }
  if (condition.empty()) condition = "no condition given";
  return quote_untrusted(condition, kPeerQuoteMax) +
         (e.text.empty() ? "" : ": " + quote_untrusted(e.text, kPeerQuoteMax));
}

// What a stream error, the end of the stream or an unexpected element means at this point.
Error unexpected_event(const LineChannel& ch, const XmppEvent& e, const std::string& when) {
  if (e.kind == XmppEvent::Kind::stream_end) {
    return declined(ch, "closed the XMPP stream " + when);
  }
  if (e.name.is(kXmppStreamsNs, "error")) {
    return declined(ch, "sent a stream error " + when + ": " + stream_error_text(e));
  }
  return declined(ch, "sent <" + escape_name(e.name.local) + "> " + when);
}

}  // namespace

Result<void> xmpp_preamble(LineChannel& ch, const std::string& domain, bool server_to_server) {
  // The domain was checked (check_starttls_options): no quotes or markup can reach the XML.
  std::string header = "<?xml version='1.0'?><stream:stream to='" + domain +
                       "' version='1.0' xmlns='" +
                       (server_to_server ? "jabber:server" : "jabber:client") +
                       "' xmlns:stream='http://etherx.jabber.org/streams'>";
  if (auto ok = ch.send(header); !ok) return ok;

  XmppReader reader;
  GETCERT_TRY_ASSIGN(auto start, next_event(ch, reader));
  if (start.version.empty() || start.version[0] < '1') {
    return tl::unexpected(declined(
        ch, "speaks XMPP before version 1.0 (its stream header has version " +
                quote_untrusted(start.version, kPeerQuoteMax) + "), which has no STARTTLS"));
  }

  // Stream features come first in practice; anything else before them is skipped, within limits.
  for (int skipped = 0;; ++skipped) {
    if (skipped == kMaxReplyLines) {
      return tl::unexpected(
          ch.peer_fault({Errc::limit_exceeded, "sent " + std::to_string(kMaxReplyLines) +
                                                   " XMPP elements without its stream features"}));
    }
    GETCERT_TRY_ASSIGN(auto e, next_event(ch, reader));
    if (e.kind == XmppEvent::Kind::element && e.name.is(kXmppStreamsNs, "features")) {
      bool offered = false;
      std::string listed;
      for (const auto& f : e.children) {
        offered = offered || f.is(kXmppTlsNs, "starttls");
        listed += (listed.empty() ? "" : ", ") + escape_name(f.local);
      }
      if (!offered) {
        return tl::unexpected(declined(ch, "does not offer STARTTLS (its stream features: " +
                                               (listed.empty() ? std::string("none") : listed) +
                                               ")"));
      }
      break;
    }
    if (e.kind != XmppEvent::Kind::element || e.name.is(kXmppStreamsNs, "error")) {
      return tl::unexpected(unexpected_event(ch, e, "before offering STARTTLS"));
    }
  }

  if (auto ok = ch.send("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"); !ok) return ok;
  GETCERT_TRY_ASSIGN(auto answer, next_event(ch, reader));
  if (answer.kind == XmppEvent::Kind::element && answer.name.is(kXmppTlsNs, "proceed")) {
    return {};
  }
  if (answer.kind == XmppEvent::Kind::element && answer.name.is(kXmppTlsNs, "failure")) {
    return tl::unexpected(declined(ch, "answered <starttls/> with <failure/>"));
  }
  return tl::unexpected(unexpected_event(ch, answer, "in answer to <starttls/>"));
}

}  // namespace getcert::detail
