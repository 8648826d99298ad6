#include "getcert/text.hpp"

#include <array>
#include <cstdint>

namespace getcert {
namespace {

// Length of the well-formed UTF-8 sequence at text[pos] and its code point, or 0 when the
// byte there does not start one (RFC 3629, Table 3-7 of the Unicode standard).
std::size_t utf8_sequence(std::string_view text, std::size_t pos, char32_t& cp) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (pos + len > text.size()) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    const unsigned char b = byte(i);
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return len;
}

constexpr std::array<char, 16> kHex{'0', '1', '2', '3', '4', '5', '6', '7',
                                    '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

void append_byte_escape(std::string& out, unsigned char b) {
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0x0F];
}

void append_code_point_escape(std::string& out, char32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += kHex[(static_cast<std::uint32_t>(cp) >> static_cast<unsigned>(shift)) & 0x0Fu];
  }
}

// Code points a terminal acts on instead of showing: C1 controls, and the bidirectional
// embeddings, overrides and isolates that can make text read differently than it is.
bool is_invisible_control(char32_t cp) noexcept {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F;
}

}  // namespace

bool is_valid_utf8(std::string_view text) noexcept {
  char32_t cp = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t len = utf8_sequence(text, pos, cp);
    if (len == 0) return false;
    pos += len;
  }
  return true;
}

std::string escape_untrusted(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char32_t cp = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t len = utf8_sequence(text, pos, cp);
    const auto b0 = static_cast<unsigned char>(text[pos]);
    if (len == 0) {
      append_byte_escape(out, b0);
      ++pos;
      continue;
    }
    if (len == 1 && (b0 < 0x20 || b0 == 0x7F)) {
      append_byte_escape(out, b0);
    } else if (len > 1 && is_invisible_control(cp)) {
      append_code_point_escape(out, cp);
    } else {
      out.append(text.substr(pos, len));
    }
    pos += len;
  }
  return out;
}

std::string valid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  char32_t cp = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t len = utf8_sequence(text, pos, cp);
    if (len == 0) {
      append_byte_escape(out, static_cast<unsigned char>(text[pos]));
      ++pos;
      continue;
    }
    out.append(text.substr(pos, len));
    pos += len;
  }
  return out;
}

std::string quote_untrusted(std::string_view text, std::size_t max, char mark) {
  const bool cut = text.size() > max;
  std::string out(1, mark);
  out += escape_untrusted(text.substr(0, max));
  if (cut) out += "...";
  out += mark;
  return out;
}

}  // namespace getcert
