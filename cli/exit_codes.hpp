#pragma once

#include "getcert/error.hpp"

namespace getcert::cli {

// Exit codes are part of the CLI contract (README "Exit codes"): never renumber.
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,       // unexpected failure (a bug)
  kExitUsage = 2,          // bad arguments or unparseable target; nothing was sent
  kExitNetwork = 3,        // resolve, connect, timeout, or a connection that broke
  kExitTls = 4,            // TLS handshake failed, or the peer does not speak TLS
  kExitVerify = 5,         // chain captured but verification failed
  kExitExpiring = 6,       // verified, but a certificate expires within --expires-in
  kExitWrongPassword = 7,  // PKCS#12 password wrong
  kExitMalformed = 8,      // input file is not what it claims to be, or exceeds a limit
  kExitUnsupported = 9,    // valid input using an algorithm getcert does not implement
  kExitOutputExists = 10,  // refusing to overwrite an existing file (use --force)
  kExitIo = 11,            // cannot read or write a local file
  kExitUnavailable = 12,   // this build leaves the command out (serve in the static binary)
};

inline int exit_code_for(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return kExitUsage;
    case Errc::resolve_failed:
    case Errc::connect_failed:
    case Errc::timeout:
    case Errc::network_error:
      return kExitNetwork;
    case Errc::tls_handshake_failed:
    case Errc::not_tls:
      return kExitTls;
    case Errc::io_error:
      return kExitIo;
    case Errc::malformed_input:
    case Errc::limit_exceeded:
      return kExitMalformed;
    case Errc::wrong_password:
    case Errc::wrong_key_password:
      return kExitWrongPassword;
    case Errc::unsupported:
      return kExitUnsupported;
    case Errc::output_exists:
      return kExitOutputExists;
    case Errc::internal:
      return kExitInternal;
    case Errc::verification_failed:
      return kExitVerify;
  }
  return kExitInternal;
}

}  // namespace getcert::cli
