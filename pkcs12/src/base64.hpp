#pragma once

// Base64 as key stores arrive in it: CI secret stores, Azure Key Vault and Kubernetes Secrets
// hand out base64 text, sometimes URL-safe, sometimes unpadded, often line-wrapped.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace getcert::pkcs12::detail {

// Decodes `text`, ignoring ASCII whitespace anywhere. Both the standard (+/) and URL-safe (-_)
// alphabets are accepted; '=' padding is optional but, when present, must be correct and last.
// nullopt for anything else (including empty text).
std::optional<std::vector<std::uint8_t>> decode_base64(std::string_view text);

// The bytes inside "-----BEGIN <label>-----" ... "-----END <label>-----" when `text` (after
// leading whitespace) starts with that armour; nullopt otherwise or when the body is not base64.
// Header lines ("Key: value") between the armour and the body are not accepted.
std::optional<std::vector<std::uint8_t>> decode_pem_armour(std::string_view text,
                                                           std::string_view label);

}  // namespace getcert::pkcs12::detail
