#pragma once

// Verification with a trust store the caller already holds (verify.cpp).

#include <vector>

#include "getcert/verify.hpp"
#include "verify/trust_store.hpp"

namespace getcert::detail {

// verify_chain() with an already loaded store (fetch loads it before dialing to fail fast).
// `parsed` may hold live handles for `presented` (same order), saving a re-parse of each.
Result<Verification> verify_with_store(const std::vector<Certificate>& presented,
                                       const VerifyOptions& options, const TrustStore& trust,
                                       const std::vector<X509*>& parsed = {});

}  // namespace getcert::detail
