#pragma once

// One data model, several renderings: JSON (schema getcert/v1) and human text.
// The text renderings escape every field that came from outside (getcert::escape_untrusted), so
// what they return is safe for a terminal and each field stays on its own line.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"
#include "getcert/fetch.hpp"

namespace getcert::cli {

using Json = nlohmann::ordered_json;

inline constexpr const char* kJsonSchema = "getcert/v1";

Json certificate_json(const Certificate& cert, std::int64_t now);
Json verification_json(const Verification& v);
// with_timings (-v): add "timings", every step of the fetch with its duration. Left out
// otherwise, so that the same server gives the same document from run to run.
Json fetch_json(const FetchResult& result, std::int64_t now, bool with_timings = false);
// The object emitted in place of a result when a target failed.
Json error_json(const std::string& input, const Error& error, int exit_code);

// The one way a JSON document leaves the CLI. Strings come from outside (certificate fields,
// PKCS#12 attributes, file names, peers' answers) and may hold any byte, so every string and
// key is first made valid UTF-8 (each invalid byte becomes the four characters `\xNN`, as
// README "JSON" documents); serializing therefore never throws. One line unless `pretty`.
std::string json_text(Json document, bool pretty);

std::string certificate_text(const Certificate& cert, std::int64_t now, const std::string& indent);
std::string verification_text(const Verification& v);
std::string fetch_text(const FetchResult& result, std::int64_t now);
// One line for a terminal: "localhost:443: verified (TLSv1.3, 3 certificates, ...)".
std::string verdict_line(const FetchResult& result, std::int64_t now);

// `getcert show`: one local file's certificates (`format` names how it was stored: "pem",
// "der", "pkcs7", "pkcs12", ...) and, when it was verified, the verdict.
Json show_json(const std::string& file, const std::string& format,
               const std::vector<Certificate>& certs, const std::optional<Verification>& verdict,
               std::int64_t now);
std::string show_text(const std::string& file, const std::string& format,
                      const std::vector<Certificate>& certs,
                      const std::optional<Verification>& verdict, std::int64_t now);

}  // namespace getcert::cli
