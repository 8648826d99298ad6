#pragma once

// Error model shared by every getcert library call. Public header: C++17, no OpenSSL types.

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace getcert {

// Stable error codes. Values are part of the API; new codes are only ever appended.
enum class Errc {
  invalid_argument = 1,  // caller passed something unparseable (endpoint, option value)
  resolve_failed,        // DNS lookup failed
  connect_failed,        // no address accepted a TCP connection
  timeout,               // the overall or connect deadline passed
  tls_handshake_failed,  // peer aborted or rejected the TLS handshake
  not_tls,               // peer answered, but not with TLS (e.g. plain HTTP)
  io_error,              // reading or writing a local file failed (never a socket: network_error)
  malformed_input,       // bytes are not what they claim to be (bad DER/PEM/PKCS#12)
  wrong_password,        // PKCS#12 integrity or decryption check failed with the password
  unsupported,           // a valid structure uses an algorithm we do not implement
  output_exists,         // refusing to overwrite an existing file
  limit_exceeded,        // input exceeds a safety limit (iteration count, nesting, size)
  internal,              // a bug or an unexpected library failure
  // A certificate chain did not verify where a verified one was required (e.g. to name its
  // trust anchor). Never returned by verify_chain()/fetch(): there a failure is a result.
  verification_failed,
  // A connection that was set up failed afterwards: the peer closed it before its answer was
  // complete, an HTTP server answered an error status, or a socket call (poll) failed.
  network_error,
  // A key store opened with its store password, but a private key inside did not decrypt with
  // the key password (a JKS/JCEKS key entry, a PKCS#12 key bag given --key-password): told
  // apart from wrong_password so that callers can ask for the right one.
  wrong_key_password,
};

// A failure: a stable code, a one-line human message, and an (unstable) low-level detail
// such as drained OpenSSL error strings. The message never contains secrets.
struct Error {
  Errc code = Errc::internal;
  std::string message;
  std::string detail;

  Error() = default;
  Error(Errc c, std::string msg, std::string det = {})
      : code(c), message(std::move(msg)), detail(std::move(det)) {}
};

template <class T>
using Result = tl::expected<T, Error>;

// Shorthand for returning a failure from a function that returns Result<T>.
inline tl::unexpected<Error> fail(Errc code, std::string message, std::string detail = {}) {
  return tl::unexpected<Error>(Error(code, std::move(message), std::move(detail)));
}

// A short machine-friendly name for a code ("timeout", "wrong_password", ...).
std::string_view to_string(Errc code) noexcept;

}  // namespace getcert
