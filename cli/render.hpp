#pragma once

// One data model, several renderings: JSON (schema getcert/v1) and human text.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "getcert/fetch.hpp"

namespace getcert::cli {

using Json = nlohmann::ordered_json;

inline constexpr const char* kJsonSchema = "getcert/v1";

Json certificate_json(const Certificate& cert, std::int64_t now);
Json verification_json(const Verification& v);
Json fetch_json(const FetchResult& result, std::int64_t now);
// The object emitted in place of a result when a target failed.
Json error_json(const std::string& input, const Error& error, int exit_code);

std::string certificate_text(const Certificate& cert, std::int64_t now, const std::string& indent);
std::string verification_text(const Verification& v);
std::string fetch_text(const FetchResult& result, std::int64_t now);
// One line for a terminal: "localhost:443: verified (TLSv1.3, 3 certificates, ...)".
std::string verdict_line(const FetchResult& result, std::int64_t now);

}  // namespace getcert::cli
