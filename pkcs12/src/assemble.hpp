#pragma once

// What the walk over a PFX found, before identities are assembled.

#include <cstdint>
#include <vector>

#include "getcert/pkcs12.hpp"
#include "internal/ossl.hpp"
#include "private_key.hpp"

namespace getcert::pkcs12::detail {

struct FoundKey {
  ParsedKey key;
  BagAttributes attributes;
};

struct FoundCert {
  Certificate cert;
  internal::X509Ptr x509;
  BagAttributes attributes;
};

struct Contents {
  std::vector<FoundKey> keys;    // file order
  std::vector<FoundCert> certs;  // file order
};

// Matches keys to certificates by public key and builds each chain by issuer name and
// signature (see decode()). Adds warnings to `info` (e.g. localKeyId pointing elsewhere) and
// counts the signature checks in info.signature_checks. limit_exceeded when the chains need
// more than `max_signature_checks` signature checks.
Result<Bundle> assemble(Contents contents, Info info, std::uint64_t max_signature_checks);

}  // namespace getcert::pkcs12::detail
