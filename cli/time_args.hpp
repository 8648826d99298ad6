#pragma once

// Parsing of durations ("10s", "500ms", "30d") and instants ("2027-03-01T00:00:00Z") typed
// on the command line. Both parsers are strict: anything they do not accept in full is a usage
// error whose message names the option and the accepted form.

#include <chrono>
#include <cstdint>
#include <string_view>

#include "getcert/error.hpp"

namespace getcert::cli {

// The longest duration accepted: 100 years. Far beyond any useful timeout or expiry window,
// and small enough that adding it to any clock's now() (nanosecond steady_clock included)
// cannot overflow.
inline constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(24) * 36500;

// Accepts DIGITS[.DIGITS][UNIT] with unit ms, s, m, h, d or w; no unit means `bare_unit`.
// Precision below a millisecond is dropped. Rejects (invalid_argument, message starting with
// `option`) signs, exponents, nan/inf, spaces, other units and anything over kMaxDuration.
Result<std::chrono::milliseconds> parse_duration(std::string_view option, std::string_view text,
                                                 std::chrono::milliseconds bare_unit);

// The range of instants accepted, in seconds since the epoch: 1970-01-01T00:00:00Z up to
// 9999-12-31T23:59:59Z (the last second RFC 3339's four-digit years can name).
inline constexpr std::int64_t kMinInstant = 0;
inline constexpr std::int64_t kMaxInstant = 253402300799;

// Accepts RFC 3339 "YYYY-MM-DDTHH:MM:SS[.fraction]" followed by Z or a numeric offset
// "+HH:MM"/"-HH:MM" (at most ±23:59), or a plain date "YYYY-MM-DD" (midnight UTC). 'T' and 'Z'
// may be lowercase. Fractions of a second are ignored. Dates that do not exist (Feb 30), hour
// 24, minute 60 and second 60 are rejected: POSIX time has no leap seconds, so ":60" could
// only be silently moved. Returns seconds since the epoch, within [kMinInstant, kMaxInstant].
Result<std::int64_t> parse_instant(std::string_view option, std::string_view text);

}  // namespace getcert::cli
