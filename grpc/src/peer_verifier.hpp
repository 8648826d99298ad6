#pragma once

// Private to getcert::grpc: the verifier with the one option servers need on top of the public
// make_verifier(), and the target spelling both fetches (one-shot credentials, AnchorWatcher)
// accept.

#include <string_view>

#include "getcert/grpc_reloading.hpp"

namespace getcert::grpc_tls::detail {

// certificate_optional: a peer that sends no certificate at all is accepted (servers that
// request, but do not require, client certificates); one that sends a certificate is judged.
GetcertVerifier make_verifier(const PeerVerifyOptions& options, Purpose purpose,
                              bool certificate_optional);

// gRPC spells DNS targets "dns:///host:port" (or "dns:host:port"); getcert dials host:port.
std::string_view without_dns_scheme(std::string_view target);

}  // namespace getcert::grpc_tls::detail
