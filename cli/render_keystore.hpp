#pragma once

// `p12 info` reports for every key store form: PKCS#12 (as DER, base64 or PEM) reuses the
// PKCS#12 rendering and adds the format and aliases; JKS and JCEKS list their entries.

#include <cstdint>
#include <string>

#include "getcert/keystore.hpp"
#include "render.hpp"

namespace getcert::cli {

Json keystore_json(const std::string& file, const pkcs12::Keystore& store, std::int64_t now);
std::string keystore_text(const std::string& file, const pkcs12::Keystore& store, std::int64_t now);

}  // namespace getcert::cli
