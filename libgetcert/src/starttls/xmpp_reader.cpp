#include "starttls/xmpp_reader.hpp"

#include <cstdint>

#include "internal/try.hpp"
#include "net/replies.hpp"

namespace getcert::detail {
namespace {

constexpr std::string_view kXmlNs = "http://www.w3.org/XML/1998/namespace";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

tl::unexpected<Error> malformed(const std::string& why) {
  return fail(Errc::malformed_input, "sent malformed XML (" + why + ")");
}

// Characters a name cannot hold; anything else (including UTF-8) is accepted, as a reader that
// only compares names needs no more.
bool is_name_char(char c) {
  return !is_space(c) && c != '<' && c != '>' && c != '/' && c != '=' && c != '"' && c != '\'' &&
         c != '&';
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The five predefined entities and character references; anything else is kept as written
// (messages quote the text, they do not interpret it).
std::string decode_entities(std::string_view in) {
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    const auto semi = in[i] == '&' ? in.find(';', i) : std::string_view::npos;
    if (semi == std::string_view::npos || semi - i > 10) {
      out += in[i++];
      continue;
    }
    const std::string_view ref = in.substr(i + 1, semi - i - 1);
    bool known = true;
    if (ref == "lt") {
      out += '<';
    } else if (ref == "gt") {
      out += '>';
    } else if (ref == "amp") {
      out += '&';
    } else if (ref == "quot") {
      out += '"';
    } else if (ref == "apos") {
      out += '\'';
    } else if (ref.size() >= 2 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      std::uint32_t cp = 0;
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      known = !digits.empty();
      for (const char c : digits) {
        std::uint32_t d = 0;
        if (c >= '0' && c <= '9') {
          d = static_cast<std::uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          d = static_cast<std::uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          d = static_cast<std::uint32_t>(c - 'A' + 10);
        } else {
          known = false;
          break;
        }
        cp = cp * (hex ? 16U : 10U) + d;
        if (cp > 0x10FFFF) known = false;
      }
      known = known && cp != 0 && (cp < 0xD800 || cp > 0xDFFF);
      if (known) append_utf8(out, cp);
    } else {
      known = false;
    }
    if (!known) {
      out.append(in.substr(i, semi - i + 1));
    }
    i = semi + 1;
  }
  return out;
}

struct Attribute {
  std::string_view name;
  std::string value;  // entities decoded
};

// "name a='1' b=\"2\"" (the inside of a start tag without '<', '>' and a closing '/').
Result<std::pair<std::string_view, std::vector<Attribute>>> parse_start_tag(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_name_char(s[i])) ++i;
  const std::string_view name = s.substr(0, i);
  if (name.empty()) return malformed("a tag without a name");
  std::vector<Attribute> attributes;
  for (;;) {
    const std::size_t before = i;
    while (i < s.size() && is_space(s[i])) ++i;
    if (i == s.size()) break;
    if (i == before)
      return malformed("no space before an attribute of <" + std::string(name) + ">");
    const std::size_t start = i;
    while (i < s.size() && is_name_char(s[i])) ++i;
    const std::string_view attr = s.substr(start, i - start);
    while (i < s.size() && is_space(s[i])) ++i;
    if (attr.empty() || i == s.size() || s[i] != '=') {
      return malformed("an attribute without a value in <" + std::string(name) + ">");
    }
    ++i;
    while (i < s.size() && is_space(s[i])) ++i;
    if (i == s.size() || (s[i] != '"' && s[i] != '\'')) {
      return malformed("an unquoted attribute value in <" + std::string(name) + ">");
    }
    const char quote = s[i++];
    const auto close = s.find(quote, i);
    if (close == std::string_view::npos) return malformed("an unterminated attribute value");
    attributes.push_back({attr, decode_entities(s.substr(i, close - i))});
    i = close + 1;
  }
  return std::make_pair(name, std::move(attributes));
}

}  // namespace

Result<std::size_t> XmppReader::take(std::string_view bytes) {
  std::size_t used = 0;
  while (used < bytes.size() && !ready_) {
    if (++event_bytes_ > kMaxXmppElement) {
      return fail(Errc::limit_exceeded,
                  "sent an XMPP element over " + std::to_string(kMaxXmppElement / 1024) + " KiB");
    }
    GETCERT_TRY(feed(bytes.substr(used)));
    ++used;
  }
  return used;
}

XmppEvent XmppReader::pop() {
  XmppEvent out = std::move(event_);
  event_ = {};
  ready_ = false;
  event_bytes_ = 0;
  in_text_child_ = false;
  return out;
}

Result<void> XmppReader::feed(std::string_view rest) {
  const char c = rest[0];
  if (mode_ == Mode::text) {
    if (c == '<') {
      mode_ = Mode::markup;
      markup_ = "<";
      quote_ = 0;
      return {};
    }
    if (open_.empty() && !is_space(c)) {
      return fail(Errc::not_tls,
                  "did not answer with an XMPP stream (it sent " + quote_untrusted(rest, 24) + ")");
    }
    if (open_.size() == 3 && in_text_child_) event_.text += c;
    return {};
  }
  markup_ += c;
  const bool tag = markup_.size() < 2 || (markup_[1] != '?' && markup_[1] != '!');
  if (tag) {
    if (quote_ != 0) {
      if (c == quote_) quote_ = 0;
      return {};
    }
    if (c == '"' || c == '\'') {
      quote_ = c;
      return {};
    }
    if (c == '<') return malformed("'<' inside a tag");
  }
  if (c != '>') return {};
  return end_markup();
}

Result<void> XmppReader::end_markup() {
  const std::string_view m = markup_;
  if (starts_with(m, "<?")) {
    if (!ends_with(m, "?>") || m.size() < 4) return {};
    // The XML declaration, before the stream; RFC 6120 forbids processing instructions.
    if (!open_.empty()) return malformed("a processing instruction inside the stream");
  } else if (starts_with(m, "<!--")) {
    if (!ends_with(m, "-->") || m.size() < 7) return {};
  } else if (starts_with(m, "<![CDATA[")) {
    if (!ends_with(m, "]]>") || m.size() < 12) return {};
    if (open_.empty()) return malformed("character data before the stream");
    add_text(m.substr(9, m.size() - 12));
  } else if (starts_with(m, "<!")) {
    return malformed("a DOCTYPE or other markup XMPP does not allow");
  } else if (starts_with(m, "</")) {
    if (auto ok = end_tag(m.substr(2, m.size() - 3)); !ok) return ok;
  } else {
    if (auto ok = start_tag(m.substr(1, m.size() - 2)); !ok) return ok;
  }
  mode_ = Mode::text;
  markup_.clear();
  return {};
}

void XmppReader::add_text(std::string_view text) {
  if (open_.size() == 3 && in_text_child_) event_.text.append(text);
}

Result<XmppName> XmppReader::resolve(std::string_view qname, const Open& innermost) const {
  const auto colon = qname.find(':');
  const std::string_view prefix =
      colon == std::string_view::npos ? std::string_view() : qname.substr(0, colon);
  XmppName out;
  out.local = std::string(colon == std::string_view::npos ? qname : qname.substr(colon + 1));
  if (out.local.empty()) return malformed("an element name without a local part");
  if (prefix == "xml") {
    out.ns = std::string(kXmlNs);
    return out;
  }
  auto find = [&prefix](const Open& o) -> const std::string* {
    for (const auto& [p, uri] : o.nss) {
      if (p == prefix) return &uri;
    }
    return nullptr;
  };
  const std::string* uri = find(innermost);
  for (auto it = open_.rbegin(); uri == nullptr && it != open_.rend(); ++it) uri = find(*it);
  if (uri != nullptr) {
    out.ns = *uri;
  } else if (!prefix.empty()) {
    return malformed("undeclared namespace prefix '" + std::string(prefix) + "'");
  }
  return out;
}

Result<void> XmppReader::start_tag(std::string_view inner) {
  const bool empty = ends_with(inner, "/");
  if (empty) inner.remove_suffix(1);
  GETCERT_TRY_ASSIGN(auto parsed, parse_start_tag(inner));
  Open o;
  o.qname = std::string(parsed.first);
  std::string version;
  for (auto& a : parsed.second) {
    if (a.name == "xmlns") {
      o.nss.emplace_back("", std::move(a.value));
    } else if (starts_with(a.name, "xmlns:")) {
      o.nss.emplace_back(std::string(a.name.substr(6)), std::move(a.value));
    } else if (a.name == "version") {
      version = std::move(a.value);
    }
  }
  GETCERT_TRY_ASSIGN(auto name, resolve(o.qname, o));

  switch (open_.size()) {
    case 0:
      if (!name.is(kXmppStreamsNs, "stream") || empty) {
        return fail(Errc::not_tls,
                    "did not answer with an XMPP stream (it sent <" + o.qname + ">)");
      }
      event_.kind = XmppEvent::Kind::stream_start;
      event_.name = std::move(name);
      event_.version = std::move(version);
      open_.push_back(std::move(o));
      ready_ = true;
      return {};
    case 1:
      event_.kind = XmppEvent::Kind::element;
      event_.name = std::move(name);
      if (empty) {
        ready_ = true;
        return {};
      }
      break;
    case 2:
      if (event_.children.size() >= kMaxXmppChildren) {
        return fail(Errc::limit_exceeded, "sent an XMPP element with more than " +
                                              std::to_string(kMaxXmppChildren) + " children");
      }
      in_text_child_ = !empty && name.local == "text";
      event_.children.push_back(std::move(name));
      break;
    default:
      break;
  }
  if (empty) return {};
  if (open_.size() >= kMaxXmppDepth) {
    return fail(Errc::limit_exceeded,
                "sent XML nested more than " + std::to_string(kMaxXmppDepth) + " deep");
  }
  open_.push_back(std::move(o));
  return {};
}

Result<void> XmppReader::end_tag(std::string_view inner) {
  while (!inner.empty() && is_space(inner.back())) inner.remove_suffix(1);
  if (open_.empty() || inner != open_.back().qname) {
    return malformed("unexpected end tag </" + std::string(inner) + ">");
  }
  const Open closed = std::move(open_.back());
  open_.pop_back();
  switch (open_.size()) {
    case 0: {
      auto name = resolve(closed.qname, closed);
      event_.kind = XmppEvent::Kind::stream_end;
      if (name) event_.name = std::move(*name);
      ready_ = true;
      break;
    }
    case 1:
      ready_ = true;
      break;
    case 2:
      if (in_text_child_) event_.text = decode_entities(event_.text);
      in_text_child_ = false;
      break;
    default:
      break;
  }
  return {};
}

}  // namespace getcert::detail
