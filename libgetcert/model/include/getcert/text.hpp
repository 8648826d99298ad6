#pragma once

// Text that came from outside (a certificate field, a peer's answer, a file name) made safe to
// show. Public header: C++17, no OpenSSL types.
//
// Two renderings, one rule for what counts as dangerous:
// - escape_untrusted(): for terminals and log lines. Printable UTF-8 passes unchanged; every
//   control character (C0, DEL, C1), every byte that is not part of valid UTF-8, and the
//   bidirectional-override code points are shown as escapes (`\x1b`, `\xff`, `\u202e`), so the
//   result is one line that cannot move the cursor, ring the bell or forge a message.
// - valid_utf8(): for JSON. Valid UTF-8 (controls included: the JSON writer escapes those) is
//   kept; each byte that is not part of valid UTF-8 becomes the four characters `\xNN`.

#include <cstddef>
#include <string>
#include <string_view>

namespace getcert {

// True when text is well-formed UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

// See above: safe for a terminal, always one line.
std::string escape_untrusted(std::string_view text);

// See above: always valid UTF-8, lossless for text that already was.
std::string valid_utf8(std::string_view text);

// The one way a message quotes text from outside: escape_untrusted() of at most `max` bytes of
// `text`, followed by "..." when it was cut, between two `mark`s. Peers' answers use '"' and a
// short `max` (`it answered "530 Must issue a STARTTLS command first"`); names the user or a
// certificate gave use '\'' (`certificate 'CN=a\x1b[31m'`).
std::string quote_untrusted(std::string_view text, std::size_t max = std::string_view::npos,
                            char mark = '"');

// A name (a target, a file, a subject) quoted whole between single quotes, escaped.
inline std::string quote_name(std::string_view text) {
  return quote_untrusted(text, std::string_view::npos, '\'');
}

}  // namespace getcert
