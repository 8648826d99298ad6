#pragma once

// Private to getcert::grpc: the verifier with the one option servers need on top of the public
// make_verifier().

#include "getcert/grpc_reloading.hpp"

namespace getcert::grpc_tls::detail {

// certificate_optional: a peer that sends no certificate at all is accepted (servers that
// request, but do not require, client certificates); one that sends a certificate is judged.
GetcertVerifier make_verifier(const PeerVerifyOptions& options, Purpose purpose,
                              bool certificate_optional);

}  // namespace getcert::grpc_tls::detail
