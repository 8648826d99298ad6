#pragma once

// Parsing of durations ("10s", "500ms", "30d") and instants ("2027-03-01T00:00:00Z") typed
// on the command line.

#include <chrono>
#include <cstdint>
#include <string>

#include "getcert/error.hpp"

namespace getcert::cli {

// Accepts a number with unit ms, s, m, h, d or w; a bare number means `bare_unit`.
Result<std::chrono::milliseconds> parse_duration(const std::string& text,
                                                 std::chrono::milliseconds bare_unit);

// Accepts RFC 3339 UTC ("2027-03-01T00:00:00Z"), with an optional numeric offset
// ("+02:00"), or a plain date ("2027-03-01", midnight UTC). Returns seconds since the epoch.
Result<std::int64_t> parse_instant(const std::string& text);

}  // namespace getcert::cli
