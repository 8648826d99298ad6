#pragma once

// Private keys as they come out of key bags: PKCS#8 parsing and description.

#include <string_view>

#include "ber.hpp"
#include "getcert/pkcs12.hpp"
#include "internal/ossl.hpp"

namespace getcert::pkcs12::detail {

struct ParsedKey {
  SecureBytes der;            // DER PrivateKeyInfo
  internal::EvpPkeyPtr pkey;  // null when OpenSSL cannot load the algorithm
  KeyInfo info;
};

// Parses PKCS#8 PrivateKeyInfo (BER tolerated, re-encoded as DER). Errors: malformed_input.
Result<ParsedKey> parse_pkcs8(Bytes der);

}  // namespace getcert::pkcs12::detail
