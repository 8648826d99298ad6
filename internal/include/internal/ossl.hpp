#pragma once

// The OpenSSL error queue, and the OpenSSL "functions" that are macros with C casts, in one
// place so the rest of the code builds with -Wold-style-cast. Owners are in owners.hpp.

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <string>
#include <vector>

#include "internal/owners.hpp"

namespace getcert::internal {

// Clears the thread's OpenSSL error queue; call before an OpenSSL sequence whose
// failure will be reported with drain_errors().
inline void clear_errors() noexcept { ERR_clear_error(); }

// Drains the thread's OpenSSL error queue into one "; "-separated line (empty if none).
std::string drain_errors();

// The drained queue as codes (oldest first) and as the line drain_errors() gives. Code that
// branches on a failure tests the codes (ERR_GET_LIB, ERR_GET_REASON), never the text: OpenSSL
// may reword its messages, and a message must not decide an exit code.
struct ErrorQueue {
  std::vector<unsigned long> codes;
  std::string text;

  // True when an entry of the queue is `reason` from the library `lib` (ERR_LIB_SSL...).
  [[nodiscard]] bool has(int lib, int reason) const noexcept;
  // OpenSSL's reason for the newest entry ("tlsv1 alert protocol version"), or "" if none.
  [[nodiscard]] std::string last_reason() const;
};
ErrorQueue drain_error_queue();

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
inline bool set_sni(SSL* ssl, const char* name) { return SSL_set_tlsext_host_name(ssl, name) == 1; }
inline void request_ocsp_staple(SSL* ssl) {
  SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp);
}
inline long get_ocsp_staple(SSL* ssl, const unsigned char** out) {
  unsigned char* p = nullptr;
  const long len = SSL_get_tlsext_status_ocsp_resp(ssl, &p);
  *out = p;
  return len;
}
#pragma GCC diagnostic pop

}  // namespace getcert::internal
