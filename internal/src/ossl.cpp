#include "internal/ossl.hpp"

#include <algorithm>
#include <array>

namespace getcert::internal {

ErrorQueue drain_error_queue() {
  ErrorQueue queue;
  std::string& out = queue.text;
  unsigned long code = 0;
  const char* data = nullptr;
  int flags = 0;
  while ((code = ERR_get_error_all(nullptr, nullptr, nullptr, &data, &flags)) != 0) {
    queue.codes.push_back(code);
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
  return queue;
}

std::string drain_errors() { return drain_error_queue().text; }

bool ErrorQueue::has(int lib, int reason) const noexcept {
  return std::any_of(codes.begin(), codes.end(), [&](unsigned long code) {
    return ERR_GET_LIB(code) == lib && ERR_GET_REASON(code) == reason;
  });
}

std::string ErrorQueue::last_reason() const {
  if (codes.empty()) return {};
  const char* reason = ERR_reason_error_string(codes.back());
  return reason != nullptr ? reason : std::string();
}

}  // namespace getcert::internal
