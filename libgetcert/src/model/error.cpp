#include "getcert/error.hpp"

namespace getcert {

std::string_view to_string(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::resolve_failed:
      return "resolve_failed";
    case Errc::connect_failed:
      return "connect_failed";
    case Errc::timeout:
      return "timeout";
    case Errc::tls_handshake_failed:
      return "tls_handshake_failed";
    case Errc::not_tls:
      return "not_tls";
    case Errc::io_error:
      return "io_error";
    case Errc::malformed_input:
      return "malformed_input";
    case Errc::wrong_password:
      return "wrong_password";
    case Errc::wrong_key_password:
      return "wrong_key_password";
    case Errc::unsupported:
      return "unsupported";
    case Errc::output_exists:
      return "output_exists";
    case Errc::limit_exceeded:
      return "limit_exceeded";
    case Errc::internal:
      return "internal";
    case Errc::verification_failed:
      return "verification_failed";
    case Errc::network_error:
      return "network_error";
  }
  return "internal";
}

}  // namespace getcert
