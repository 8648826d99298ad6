#pragma once

// Renderings of a decoded PKCS#12 file for `p12 info`: structure and certificates, never keys.

#include <cstdint>
#include <string>

#include "getcert/pkcs12.hpp"
#include "render.hpp"

namespace getcert::cli {

Json p12_json(const std::string& file, const pkcs12::Bundle& bundle, std::int64_t now);
std::string p12_text(const std::string& file, const pkcs12::Bundle& bundle, std::int64_t now);

}  // namespace getcert::cli
