#pragma once

// Private keys as they come out of key bags: PKCS#8 parsing, description, PEM encoding.

#include <string_view>

#include "ber.hpp"
#include "detail/ossl.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::detail {

struct ParsedKey {
  SecureBytes der;                   // DER PrivateKeyInfo
  getcert::detail::EvpPkeyPtr pkey;  // null when OpenSSL cannot load the algorithm
  KeyInfo info;
};

// Parses PKCS#8 PrivateKeyInfo (BER tolerated, re-encoded as DER). Errors: malformed_input.
Result<ParsedKey> parse_pkcs8(Bytes der);

// PEM armour ("-----BEGIN <label>-----", 64-column base64) into wiped memory.
SecureString pem_encode(std::string_view label, Bytes der);

}  // namespace getcert::pkcs12::detail
