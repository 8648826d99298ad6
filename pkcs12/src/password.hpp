#pragma once

// The byte strings a PKCS#12 password turns into. The PKCS#12 KDF (MAC, PBES1) takes a
// BMPString (UTF-16BE plus a 00 00 terminator); PBKDF2 (PBES2, PBMAC1) takes raw bytes. Real
// producers disagree on both, so every password yields a short, ordered list of forms to try.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::detail {

struct PasswordVariant {
  SecureBytes bytes;
  bool reinterpreted = false;  // the ISO-8859-1 / raw-byte reading of a UTF-8 password
};

// One password the file may have been made with, in both encodings.
struct PasswordForms {
  PasswordKind kind = PasswordKind::given;
  std::vector<PasswordVariant> bmp;  // PKCS#12 KDF inputs, preferred first
  std::vector<PasswordVariant> raw;  // PBKDF2 inputs, preferred first
};

// nullopt or "" -> {absent, empty}; anything else -> {given}.
std::vector<PasswordForms> password_candidates(const std::optional<Password>& password);

// UTF-8 -> BMPString with terminator (non-BMP characters as surrogate pairs); nullopt if the
// input is not valid UTF-8.
std::optional<SecureBytes> utf8_to_bmp(std::string_view utf8);

// BMPString (UTF-16BE) -> UTF-8; unpaired surrogates and odd lengths become U+FFFD.
std::string bmp_to_utf8(const std::vector<std::uint8_t>& bmp);

}  // namespace getcert::pkcs12::detail
