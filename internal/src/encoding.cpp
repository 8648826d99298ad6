#include "internal/encoding.hpp"

namespace getcert::internal {

std::string hex_upper(const unsigned char* data, std::size_t len) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(len * 2);
  for (std::size_t i = 0; i < len; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0x0F]);
  }
  return out;
}

std::string base64(const unsigned char* data, std::size_t len) {
  std::string out(4 * ((len + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(len));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace getcert::internal
