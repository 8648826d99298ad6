#pragma once

// DER builders for inputs no tool writes (hand-crafted PKCS#12 files, odd bags and attributes,
// edited iteration counts), and hex for comparing and showing the bytes. Header-only: the
// library tests and the CLI tests both build files with it.

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace getcert::test::asn1 {

using Der = std::vector<std::uint8_t>;

// One TLV with a definite length in the shortest form.
inline Der tlv(std::uint8_t tag, const Der& content) {
  Der out{tag};
  const std::size_t n = content.size();
  if (n < 0x80) {
    out.push_back(static_cast<std::uint8_t>(n));
  } else {
    Der len;
    for (std::size_t v = n; v > 0; v >>= 8) len.insert(len.begin(), static_cast<std::uint8_t>(v));
    out.push_back(static_cast<std::uint8_t>(0x80 | len.size()));
    out.insert(out.end(), len.begin(), len.end());
  }
  out.insert(out.end(), content.begin(), content.end());
  return out;
}

inline Der cat(const std::vector<Der>& parts) {
  Der out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline Der seq(const std::vector<Der>& parts) { return tlv(0x30, cat(parts)); }
inline Der set(const std::vector<Der>& parts) { return tlv(0x31, cat(parts)); }
inline Der octets(const Der& bytes) { return tlv(0x04, bytes); }
inline Der explicit0(const Der& inner) { return tlv(0xA0, inner); }
inline Der null_value() { return {0x05, 0x00}; }

inline Der integer(std::uint64_t v) {
  Der content;
  do {
    content.insert(content.begin(), static_cast<std::uint8_t>(v & 0xFF));
    v >>= 8;
  } while (v > 0);
  if ((content.front() & 0x80) != 0) content.insert(content.begin(), 0x00);
  return tlv(0x02, content);
}

// Dotted OID text to DER.
inline Der oid(std::string_view dotted) {
  std::vector<std::uint64_t> arcs;
  std::stringstream in{std::string(dotted)};
  for (std::string arc; std::getline(in, arc, '.');) arcs.push_back(std::stoull(arc));
  Der content;
  auto base128 = [&content](std::uint64_t v) {
    Der groups{static_cast<std::uint8_t>(v & 0x7F)};
    for (v >>= 7; v > 0; v >>= 7) {
      groups.insert(groups.begin(), static_cast<std::uint8_t>(0x80 | (v & 0x7F)));
    }
    content.insert(content.end(), groups.begin(), groups.end());
  };
  base128(arcs.at(0) * 40 + arcs.at(1));
  for (std::size_t i = 2; i < arcs.size(); ++i) base128(arcs[i]);
  return tlv(0x06, content);
}

// Upper-case hex of bytes (any byte container), for comparisons and failure messages.
template <typename Bytes>
std::string to_hex(const Bytes& bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const auto b : bytes) {
    const auto v = static_cast<std::uint8_t>(b);
    out.push_back(kDigits[v >> 4U]);
    out.push_back(kDigits[v & 0x0FU]);
  }
  return out;
}

}  // namespace getcert::test::asn1
