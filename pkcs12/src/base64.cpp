// Base64 and PEM unwrapping for read_keystore().

#include "base64.hpp"

#include <array>
#include <string>

#include "getcert/keystore.hpp"

namespace getcert::pkcs12::detail {
namespace {

constexpr std::uint8_t kInvalid = 0xFF;
constexpr std::uint8_t kSpace = 0xFE;

constexpr std::array<std::uint8_t, 256> make_table() {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = kInvalid;
  for (std::size_t i = 0; i < 26; ++i) {
    t[std::size_t{'A'} + i] = static_cast<std::uint8_t>(i);
    t[std::size_t{'a'} + i] = static_cast<std::uint8_t>(26 + i);
  }
  for (std::size_t i = 0; i < 10; ++i) t[std::size_t{'0'} + i] = static_cast<std::uint8_t>(52 + i);
  t['+'] = 62;
  t['-'] = 62;
  t['/'] = 63;
  t['_'] = 63;
  for (const char c : {' ', '\t', '\r', '\n', '\v', '\f'})
    t[static_cast<unsigned char>(c)] = kSpace;
  return t;
}

constexpr auto kTable = make_table();

bool is_space(char c) { return kTable[static_cast<unsigned char>(c)] == kSpace; }

}  // namespace

std::optional<std::vector<std::uint8_t>> decode_base64(std::string_view text) {
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 3);
  std::uint32_t acc = 0;
  std::size_t digits = 0;   // base64 digits seen
  std::size_t padding = 0;  // '=' seen
  for (const char c : text) {
    const std::uint8_t v = kTable[static_cast<unsigned char>(c)];
    if (v == kSpace) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    // A digit after padding, or an invalid byte: not base64 text.
    if (v == kInvalid || padding > 0) return std::nullopt;
    acc = (acc << 6U) | v;
    ++digits;
    if (digits % 4 == 0) {
      out.push_back(static_cast<std::uint8_t>(acc >> 16U));
      out.push_back(static_cast<std::uint8_t>(acc >> 8U));
      out.push_back(static_cast<std::uint8_t>(acc));
      acc = 0;
    }
  }
  const std::size_t tail = digits % 4;
  // One leftover digit carries fewer than 8 bits; padding must complete the last quantum.
  if (digits == 0 || tail == 1) return std::nullopt;
  if (padding > 0 && (tail + padding) % 4 != 0) return std::nullopt;
  if (padding > 2) return std::nullopt;
  if (tail == 2) {
    out.push_back(static_cast<std::uint8_t>(acc >> 4U));
  } else if (tail == 3) {
    out.push_back(static_cast<std::uint8_t>(acc >> 10U));
    out.push_back(static_cast<std::uint8_t>(acc >> 2U));
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> decode_pem_armour(std::string_view text,
                                                           std::string_view label) {
  std::size_t start = 0;
  while (start < text.size() && is_space(text[start])) ++start;
  const std::string begin = "-----BEGIN " + std::string(label) + "-----";
  const std::string end = "-----END " + std::string(label) + "-----";
  if (text.substr(start, begin.size()) != begin) return std::nullopt;
  const std::size_t body = start + begin.size();
  const std::size_t stop = text.find(end, body);
  if (stop == std::string_view::npos) return std::nullopt;
  return decode_base64(text.substr(body, stop - body));
}

}  // namespace getcert::pkcs12::detail

namespace getcert::pkcs12 {

std::optional<std::vector<std::uint8_t>> decode_base64_text(
    const std::vector<std::uint8_t>& bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  // PEM armour is made of base64-alphabet characters ('-' is URL-safe), so it is ruled out first.
  if (text.find("-----BEGIN ") != std::string_view::npos) return std::nullopt;
  return detail::decode_base64(text);
}

}  // namespace getcert::pkcs12
