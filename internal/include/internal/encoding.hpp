#pragma once

// Encodings of binary data: uppercase hex, base64 and PEM blocks, and the big-endian 16-bit
// fields of wire protocols.

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace getcert::internal {

// Uppercase hex of bytes, no separators.
std::string hex_upper(const unsigned char* data, std::size_t len);
// Standard base64 (no line breaks).
std::string base64(const unsigned char* data, std::size_t len);

// The 16-bit big-endian (network order) field at s[i], s[i + 1]; the caller checks the bounds.
inline std::uint16_t read_be16(std::string_view s, std::size_t i) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(s[i]) << 8U) |
                                    static_cast<unsigned char>(s[i + 1]));
}

// Appends value as a 16-bit big-endian (network order) field.
inline void append_be16(std::string& out, std::uint16_t value) {
  out += static_cast<char>((value >> 8U) & 0xFFU);
  out += static_cast<char>(value & 0xFFU);
}

// One PEM block ("-----BEGIN label-----", 64-column base64 lines, "-----END label-----").
// String is std::string or a wiping string type for key material: the encoded text only ever
// lives in `out` and in a line buffer that is wiped before returning.
template <class String>
String pem_encode(std::string_view label, const unsigned char* der, std::size_t len) {
  String out;
  out.reserve(len * 4 / 3 + len / 48 + 80);
  out += "-----BEGIN ";
  out.append(label.data(), label.size());
  out += "-----\n";
  constexpr std::size_t kChunk = 48;  // 48 bytes -> one 64-column base64 line
  std::array<unsigned char, 65> line{};
  for (std::size_t off = 0; off < len; off += kChunk) {
    const std::size_t n = std::min(kChunk, len - off);
    const int written = EVP_EncodeBlock(line.data(), der + off, static_cast<int>(n));
    out.append(reinterpret_cast<const char*>(line.data()), static_cast<std::size_t>(written));
    out += '\n';
  }
  OPENSSL_cleanse(line.data(), line.size());
  out += "-----END ";
  out.append(label.data(), label.size());
  out += "-----\n";
  return out;
}

}  // namespace getcert::internal
