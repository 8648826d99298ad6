#include "password.hpp"

#include <cstdint>

namespace getcert::pkcs12::detail {
namespace {

// Strict UTF-8 decoding (no overlongs, no surrogates, at most U+10FFFF).
std::optional<std::vector<char32_t>> decode_utf8(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    std::size_t n = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if (b0 < 0x80) {
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      n = 1, cp = b0 & 0x1FU, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      n = 2, cp = b0 & 0x0FU, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      n = 3, cp = b0 & 0x07U, min = 0x10000;
    } else {
      return std::nullopt;
    }
    if (n > 0 && i + n >= s.size()) return std::nullopt;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<std::uint8_t>(s[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3FU);
    }
    if (n > 0 && cp < min) return std::nullopt;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    out.push_back(cp);
    i += n + 1;
  }
  return out;
}

void push_unit(SecureBytes& out, std::uint32_t unit) {
  out.push_back(static_cast<std::uint8_t>(unit >> 8));
  out.push_back(static_cast<std::uint8_t>(unit & 0xFF));
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

SecureBytes bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

// Each byte taken as one ISO-8859-1 character: OpenSSL's "old broken" BMP conversion and what
// producers that ignore UTF-8 did.
SecureBytes bytewise_bmp(std::string_view s) {
  SecureBytes out;
  out.reserve(s.size() * 2 + 2);
  for (char c : s) push_unit(out, static_cast<std::uint8_t>(c));
  push_unit(out, 0);
  return out;
}

}  // namespace

std::optional<SecureBytes> utf8_to_bmp(std::string_view utf8) {
  auto cps = decode_utf8(utf8);
  if (!cps) return std::nullopt;
  SecureBytes out;
  out.reserve(cps->size() * 2 + 2);
  for (char32_t cp : *cps) {
    if (cp >= 0x10000) {
      const std::uint32_t v = cp - 0x10000;
      push_unit(out, 0xD800 | (v >> 10));
      push_unit(out, 0xDC00 | (v & 0x3FF));
    } else {
      push_unit(out, cp);
    }
  }
  push_unit(out, 0);
  secure_wipe(cps->data(), cps->size() * sizeof(char32_t));
  return out;
}

std::string bmp_to_utf8(const std::vector<std::uint8_t>& bmp) {
  std::string out;
  const std::size_t units = bmp.size() / 2;
  for (std::size_t i = 0; i < units; ++i) {
    const auto u = static_cast<char32_t>((bmp[2 * i] << 8) | bmp[2 * i + 1]);
    if (u >= 0xD800 && u <= 0xDBFF && i + 1 < units) {
      const auto lo = static_cast<char32_t>((bmp[2 * i + 2] << 8) | bmp[2 * i + 3]);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
        ++i;
        continue;
      }
    }
    append_utf8(out, (u >= 0xD800 && u <= 0xDFFF) ? char32_t{0xFFFD} : u);
  }
  if (bmp.size() % 2 != 0) append_utf8(out, 0xFFFD);
  return out;
}

std::vector<PasswordForms> password_candidates(const std::optional<Password>& password) {
  std::vector<PasswordForms> out;
  if (!password || password->empty()) {
    // Which of the two a producer used is not recorded anywhere; only the MAC (or a successful
    // decryption) tells. PBKDF2 sees zero bytes for both.
    PasswordForms absent;
    absent.kind = PasswordKind::absent;
    absent.bmp.push_back({SecureBytes{}, false});
    absent.raw.push_back({SecureBytes{}, false});
    PasswordForms empty;
    empty.kind = PasswordKind::empty;
    empty.bmp.push_back({SecureBytes{0, 0}, false});
    empty.raw.push_back({SecureBytes{}, false});
    out.push_back(std::move(absent));
    out.push_back(std::move(empty));
    return out;
  }
  const std::string_view pw = password->view();
  PasswordForms given;
  given.kind = PasswordKind::given;
  bool ascii = true;
  for (char c : pw) ascii = ascii && static_cast<std::uint8_t>(c) < 0x80;
  if (auto bmp = utf8_to_bmp(pw)) {
    given.bmp.push_back({std::move(*bmp), false});
    given.raw.push_back({bytes_of(pw), false});
    if (!ascii) {
      given.bmp.push_back({bytewise_bmp(pw), true});
      // PBKDF2 keyed with the ISO-8859-1 bytes of the text (JSafe / old Java), when every
      // character has one.
      auto cps = decode_utf8(pw);
      bool latin1 = true;
      for (char32_t cp : *cps) latin1 = latin1 && cp <= 0xFF;
      if (latin1) {
        SecureBytes raw;
        for (char32_t cp : *cps) raw.push_back(static_cast<std::uint8_t>(cp));
        given.raw.push_back({std::move(raw), true});
      }
      secure_wipe(cps->data(), cps->size() * sizeof(char32_t));
    }
  } else {
    // Not UTF-8: the caller handed us bytes in some 8-bit charset; ISO-8859-1 is the only
    // reading that maps every byte.
    given.bmp.push_back({bytewise_bmp(pw), true});
    given.raw.push_back({bytes_of(pw), false});
  }
  out.push_back(std::move(given));
  return out;
}

}  // namespace getcert::pkcs12::detail
