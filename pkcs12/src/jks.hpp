#pragma once

// Java key stores, read only: Sun's JKS (magic FEEDFEED) and SunJCE's JCEKS (magic CECECECE).

#include "ber.hpp"
#include "getcert/keystore.hpp"

namespace getcert::pkcs12::detail {

inline constexpr std::uint32_t kJksMagic = 0xFEEDFEED;
inline constexpr std::uint32_t kJceksMagic = 0xCECECECE;

// Reads a whole JKS or JCEKS store (`format` says which magic it starts with); see
// read_keystore() for the errors. Structure is checked completely before any password is.
Result<Keystore> read_java_keystore(Bytes data, KeystoreFormat format,
                                    const KeystoreOptions& options);

}  // namespace getcert::pkcs12::detail
