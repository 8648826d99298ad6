#include "internal/ossl.hpp"

#include <array>

namespace getcert::internal {

std::string drain_errors() {
  std::string out;
  unsigned long code = 0;
  const char* data = nullptr;
  int flags = 0;
  while ((code = ERR_get_error_all(nullptr, nullptr, nullptr, &data, &flags)) != 0) {
    std::array<char, 256> buf{};
    ERR_error_string_n(code, buf.data(), buf.size());
    if (!out.empty()) out += "; ";
    out += buf.data();
    if ((flags & ERR_TXT_STRING) != 0 && data != nullptr && *data != '\0') {
      out += " (";
      out += data;
      out += ")";
    }
  }
  return out;
}

}  // namespace getcert::internal
