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

// Whether der holds one whole PKCS#8 PrivateKeyInfo: exactly when parse_pkcs8 succeeds, without
// loading the key (OpenSSL 3.0 sets up its key decoders anew for every key, a large part of a
// small file's decoding). For telling a right password from a wrong one.
bool is_pkcs8(Bytes der);

// Parses PKCS#8 PrivateKeyInfo (BER tolerated, re-encoded as DER). Errors: malformed_input.
Result<ParsedKey> parse_pkcs8(Bytes der);

}  // namespace getcert::pkcs12::detail
