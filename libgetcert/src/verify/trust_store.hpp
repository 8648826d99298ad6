#pragma once

#include <string>

#include "getcert/error.hpp"
#include "getcert/verify.hpp"
#include "internal/ossl.hpp"

namespace getcert::detail {

struct TrustStore {
  internal::X509StorePtr store;
  std::string description;  // "system (/usr/lib/ssl/certs)", "file:ca.pem", ...
  // The user named these certificates (--ca-file, --ca-dir): each one is a trust anchor,
  // self-signed or not. The system store keeps roots-only semantics.
  bool explicit_anchors = false;
};

// Loads --ca-file/--ca-dir, or the system store when both are empty. Fails with io_error
// (file missing or unreadable) or malformed_input (no certificate in the file).
Result<TrustStore> load_trust_store(const TrustOptions& options);

}  // namespace getcert::detail
