#pragma once

// Plain-text protocol preambles that switch a connection to TLS (STARTTLS and friends), one
// small function per protocol, run on the connected socket before the TLS handshake.

#include <string>

#include "detail/dial.hpp"
#include "getcert/error.hpp"
#include "getcert/fetch.hpp"

namespace getcert::detail {

// Runs the preamble for `protocol` on fd within the deadline. Fails with not_tls when the
// server does not offer or accept the upgrade, timeout, or io_error.
Result<void> negotiate_starttls(StartTls protocol, int fd, const std::string& host,
                                Clock::time_point deadline);

}  // namespace getcert::detail
