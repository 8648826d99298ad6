#include "legacy_ciphers.hpp"

#include <cstddef>
#include <stdexcept>

namespace getcert::pkcs12::detail {
namespace {

// RFC 2268 section 2: PITABLE, a permutation of 0..255 derived from the digits of pi.
constexpr std::array<std::uint8_t, 256> kPiTable{
    0xd9, 0x78, 0xf9, 0xc4, 0x19, 0xdd, 0xb5, 0xed, 0x28, 0xe9, 0xfd, 0x79, 0x4a, 0xa0, 0xd8, 0x9d,
    0xc6, 0x7e, 0x37, 0x83, 0x2b, 0x76, 0x53, 0x8e, 0x62, 0x4c, 0x64, 0x88, 0x44, 0x8b, 0xfb, 0xa2,
    0x17, 0x9a, 0x59, 0xf5, 0x87, 0xb3, 0x4f, 0x13, 0x61, 0x45, 0x6d, 0x8d, 0x09, 0x81, 0x7d, 0x32,
    0xbd, 0x8f, 0x40, 0xeb, 0x86, 0xb7, 0x7b, 0x0b, 0xf0, 0x95, 0x21, 0x22, 0x5c, 0x6b, 0x4e, 0x82,
    0x54, 0xd6, 0x65, 0x93, 0xce, 0x60, 0xb2, 0x1c, 0x73, 0x56, 0xc0, 0x14, 0xa7, 0x8c, 0xf1, 0xdc,
    0x12, 0x75, 0xca, 0x1f, 0x3b, 0xbe, 0xe4, 0xd1, 0x42, 0x3d, 0xd4, 0x30, 0xa3, 0x3c, 0xb6, 0x26,
    0x6f, 0xbf, 0x0e, 0xda, 0x46, 0x69, 0x07, 0x57, 0x27, 0xf2, 0x1d, 0x9b, 0xbc, 0x94, 0x43, 0x03,
    0xf8, 0x11, 0xc7, 0xf6, 0x90, 0xef, 0x3e, 0xe7, 0x06, 0xc3, 0xd5, 0x2f, 0xc8, 0x66, 0x1e, 0xd7,
    0x08, 0xe8, 0xea, 0xde, 0x80, 0x52, 0xee, 0xf7, 0x84, 0xaa, 0x72, 0xac, 0x35, 0x4d, 0x6a, 0x2a,
    0x96, 0x1a, 0xd2, 0x71, 0x5a, 0x15, 0x49, 0x74, 0x4b, 0x9f, 0xd0, 0x5e, 0x04, 0x18, 0xa4, 0xec,
    0xc2, 0xe0, 0x41, 0x6e, 0x0f, 0x51, 0xcb, 0xcc, 0x24, 0x91, 0xaf, 0x50, 0xa1, 0xf4, 0x70, 0x39,
    0x99, 0x7c, 0x3a, 0x85, 0x23, 0xb8, 0xb4, 0x7a, 0xfc, 0x02, 0x36, 0x5b, 0x25, 0x55, 0x97, 0x31,
    0x2d, 0x5d, 0xfa, 0x98, 0xe3, 0x8a, 0x92, 0xae, 0x05, 0xdf, 0x29, 0x10, 0x67, 0x6c, 0xba, 0xc9,
    0xd3, 0x00, 0xe6, 0xcf, 0xe1, 0x9e, 0xa8, 0x2c, 0x63, 0x16, 0x01, 0x3f, 0x58, 0xe2, 0x89, 0xa9,
    0x0d, 0x38, 0x34, 0x1b, 0xab, 0x33, 0xff, 0xb0, 0xbb, 0x48, 0x0c, 0x5f, 0xb9, 0xb1, 0xcd, 0x2e,
    0xc5, 0xf3, 0xdb, 0x47, 0xe5, 0xa5, 0x9c, 0x77, 0x0a, 0xa6, 0x20, 0x68, 0xfe, 0x7f, 0xc1, 0xad,
};

constexpr std::uint16_t rotate_right(std::uint16_t v, unsigned bits) noexcept {
  return static_cast<std::uint16_t>((v >> bits) | (v << (16U - bits)));
}

template <std::size_t N>
void wipe(std::array<std::uint8_t, N>& a) noexcept {
  secure_wipe(a.data(), a.size());
}

}  // namespace

Rc2::Rc2(Bytes key, unsigned effective_bits) {
  constexpr std::size_t kMaxKey = 128;
  if (key.empty() || key.size() > kMaxKey || effective_bits == 0 || effective_bits > 1024) {
    throw std::invalid_argument("RC2 key or effective key length out of range");
  }
  // RFC 2268 section 2: expand the key to 128 bytes, then reduce its effective length to T1 bits.
  std::array<std::uint8_t, kMaxKey> l{};
  const std::size_t t = key.size();
  for (std::size_t i = 0; i < t; ++i) l[i] = key[i];
  for (std::size_t i = t; i < kMaxKey; ++i) {
    l[i] = kPiTable[static_cast<std::uint8_t>(l[i - 1] + l[i - t])];
  }
  const std::size_t t8 = (effective_bits + 7) / 8;
  const auto tm = static_cast<std::uint8_t>(0xFFU >> (8 * t8 - effective_bits));
  l[kMaxKey - t8] = kPiTable[l[kMaxKey - t8] & tm];
  for (std::size_t i = kMaxKey - t8; i-- > 0;) {
    l[i] = kPiTable[l[i + 1] ^ l[i + t8]];
  }
  for (std::size_t i = 0; i < k_.size(); ++i) {
    k_[i] = static_cast<std::uint16_t>(l[2 * i] | (l[2 * i + 1] << 8U));
  }
  wipe(l);
}

Rc2::~Rc2() { secure_wipe(k_.data(), sizeof(k_)); }

void Rc2::decrypt_block(const std::uint8_t* in, std::uint8_t* out) const noexcept {
  // RFC 2268 section 4: the inverse of encryption's 5 mixing, 1 mashing, 6 mixing, 1 mashing and
  // 5 mixing rounds, over four little-endian 16-bit words.
  std::array<std::uint16_t, 4> r{};
  for (std::size_t i = 0; i < 4; ++i) {
    r[i] = static_cast<std::uint16_t>(in[2 * i] | (in[2 * i + 1] << 8U));
  }
  constexpr std::array<unsigned, 4> kShift{1, 2, 3, 5};
  std::size_t j = 63;
  const auto mix_round = [&] {
    for (std::size_t i = 4; i-- > 0;) {
      const std::uint16_t a = r[(i + 3) % 4];  // R[i-1]
      const std::uint16_t b = r[(i + 2) % 4];  // R[i-2]
      const std::uint16_t c = r[(i + 1) % 4];  // R[i-3]
      r[i] = rotate_right(r[i], kShift[i]);
      r[i] =
          static_cast<std::uint16_t>(r[i] - k_[j] - (a & b) - (static_cast<std::uint16_t>(~a) & c));
      --j;
    }
  };
  const auto mash_round = [&] {
    for (std::size_t i = 4; i-- > 0;) {
      r[i] = static_cast<std::uint16_t>(r[i] - k_[r[(i + 3) % 4] & 63U]);
    }
  };
  for (int n = 0; n < 5; ++n) mix_round();
  mash_round();
  for (int n = 0; n < 6; ++n) mix_round();
  mash_round();
  for (int n = 0; n < 5; ++n) mix_round();
  for (std::size_t i = 0; i < 4; ++i) {
    out[2 * i] = static_cast<std::uint8_t>(r[i] & 0xFFU);
    out[2 * i + 1] = static_cast<std::uint8_t>(r[i] >> 8U);
  }
}

Rc4::Rc4(Bytes key) {
  if (key.empty() || key.size() > s_.size()) {
    throw std::invalid_argument("RC4 key length out of range");
  }
  for (std::size_t i = 0; i < s_.size(); ++i) s_[i] = static_cast<std::uint8_t>(i);
  std::uint8_t j = 0;
  for (std::size_t i = 0; i < s_.size(); ++i) {
    j = static_cast<std::uint8_t>(j + s_[i] + key[i % key.size()]);
    std::swap(s_[i], s_[j]);
  }
}

Rc4::~Rc4() {
  wipe(s_);
  i_ = 0;
  j_ = 0;
}

void Rc4::apply(std::uint8_t* data, std::size_t size) noexcept {
  for (std::size_t n = 0; n < size; ++n) {
    i_ = static_cast<std::uint8_t>(i_ + 1);
    j_ = static_cast<std::uint8_t>(j_ + s_[i_]);
    std::swap(s_[i_], s_[j_]);
    data[n] ^= s_[static_cast<std::uint8_t>(s_[i_] + s_[j_])];
  }
}

std::optional<SecureBytes> rc2_cbc_decrypt(Bytes key, unsigned effective_bits, Bytes iv,
                                           Bytes ciphertext) {
  constexpr std::size_t kBlock = Rc2::kBlockSize;
  if (iv.size() != kBlock) throw std::invalid_argument("RC2-CBC needs an 8-byte IV");
  if (ciphertext.empty() || ciphertext.size() % kBlock != 0) return std::nullopt;
  const Rc2 rc2(key, effective_bits);
  SecureBytes out(ciphertext.size());
  const std::uint8_t* previous = iv.data();
  for (std::size_t at = 0; at < ciphertext.size(); at += kBlock) {
    rc2.decrypt_block(ciphertext.data() + at, out.data() + at);
    for (std::size_t i = 0; i < kBlock; ++i) out[at + i] ^= previous[i];
    previous = ciphertext.data() + at;
  }
  // PKCS#7 padding: 1..8 bytes, each holding the pad length.
  const std::uint8_t pad = out.back();
  if (pad == 0 || pad > kBlock) return std::nullopt;
  for (std::size_t i = out.size() - pad; i < out.size(); ++i) {
    if (out[i] != pad) return std::nullopt;
  }
  out.resize(out.size() - pad);
  return out;
}

SecureBytes rc4_decrypt(Bytes key, Bytes ciphertext) {
  SecureBytes out(ciphertext.begin(), ciphertext.end());
  Rc4 rc4(key);
  rc4.apply(out.data(), out.size());
  return out;
}

}  // namespace getcert::pkcs12::detail
