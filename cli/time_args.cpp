#include "time_args.hpp"

#include <array>
#include <optional>
#include <string>

#include "getcert/text.hpp"

namespace getcert::cli {
namespace {

using std::chrono::milliseconds;

struct Unit {
  std::string_view name;
  std::int64_t ms;
};
constexpr std::array<Unit, 6> kUnits{{{"ms", 1},
                                      {"s", 1000},
                                      {"m", 60'000},
                                      {"h", 3'600'000},
                                      {"d", 86'400'000},
                                      {"w", 604'800'000}}};

// Fraction digits that can still change the result: 10^-9 of the largest unit (a week) is
// under a millisecond, so digits past the ninth are checked but do not count.
constexpr int kFractionDigits = 9;
constexpr std::int64_t kFractionScale = 1'000'000'000;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view unit_name(milliseconds unit) {
  for (const auto& u : kUnits) {
    if (u.ms == unit.count()) return u.name;
  }
  return "ms";
}

tl::unexpected<Error> not_a_duration(std::string_view option, std::string_view text,
                                     milliseconds bare_unit) {
  const std::string_view bare = unit_name(bare_unit);
  const std::string example = bare == "d" ? "30d" : "10s";
  return fail(Errc::invalid_argument,
              std::string(option) + ": " + quote_name(text) +
                  " is not a duration; use a number with a unit ms|s|m|h|d|w (a bare number is " +
                  std::string(bare) + "), e.g. " + example);
}

// Reads exactly `width` digits at text[pos...]; nullopt when any of them is not a digit.
std::optional<std::int64_t> fixed_digits(std::string_view text, std::size_t pos,
                                         std::size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  std::int64_t value = 0;
  for (std::size_t i = pos; i < pos + width; ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool is_leap_year(std::int64_t year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

std::int64_t days_in_month(std::int64_t year, std::int64_t month) {
  static constexpr std::array<std::int64_t, 12> kDays{31, 28, 31, 30, 31, 30,
                                                      31, 31, 30, 31, 30, 31};
  if (month == 2 && is_leap_year(year)) return 29;
  return kDays.at(static_cast<std::size_t>(month - 1));
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil), so that
// no struct tm normalisation can turn an impossible date into a different one.
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

constexpr std::string_view kInstantForm =
    "use RFC 3339, e.g. 2027-03-01T00:00:00Z or 2027-03-01T02:00:00+02:00, or a date "
    "2027-03-01";

tl::unexpected<Error> bad_instant(std::string_view option, std::string_view text,
                                  const std::string& why) {
  return fail(Errc::invalid_argument, std::string(option) + ": " + quote_name(text) +
                                          " is not a valid time (" + why + "); " +
                                          std::string(kInstantForm));
}

}  // namespace

Result<milliseconds> parse_duration(std::string_view option, std::string_view text,
                                    milliseconds bare_unit) {
  // Integer part: digits only, so signs, "nan", "inf", hex and exponents never get this far.
  std::size_t pos = 0;
  std::int64_t whole = 0;
  bool too_long = false;
  while (pos < text.size() && is_digit(text[pos])) {
    // Stop accumulating once past the limit in the smallest unit; the digits are still checked.
    if (!too_long) {
      whole = whole * 10 + (text[pos] - '0');
      too_long = whole > kMaxDuration.count();
    }
    ++pos;
  }
  if (pos == 0) return not_a_duration(option, text, bare_unit);
  std::int64_t fraction = 0;  // in units of 10^-9
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const std::size_t first = pos;
    std::int64_t scale = kFractionScale;
    while (pos < text.size() && is_digit(text[pos])) {
      if (pos - first < kFractionDigits) {
        scale /= 10;
        fraction += (text[pos] - '0') * scale;
      }
      ++pos;
    }
    if (pos == first) return not_a_duration(option, text, bare_unit);
  }
  const std::string_view unit = text.substr(pos);
  std::int64_t factor = bare_unit.count();
  if (!unit.empty()) {
    factor = 0;
    for (const auto& u : kUnits) {
      if (unit == u.name) factor = u.ms;
    }
    if (factor == 0) return not_a_duration(option, text, bare_unit);
  }
  const std::int64_t max = kMaxDuration.count();
  if (too_long || factor <= 0 || whole > max / factor ||
      whole * factor + fraction * factor / kFractionScale > max) {
    return fail(Errc::invalid_argument, std::string(option) + ": " + quote_name(text) +
                                            " is too long; the longest accepted duration is " +
                                            std::to_string(max / 86'400'000) + "d (100 years)");
  }
  return milliseconds(whole * factor + fraction * factor / kFractionScale);
}

Result<std::int64_t> parse_instant(std::string_view option, std::string_view text) {
  const auto year = fixed_digits(text, 0, 4);
  const auto month = fixed_digits(text, 5, 2);
  const auto day = fixed_digits(text, 8, 2);
  if (!year || !month || !day || text[4] != '-' || text[7] != '-' ||
      (text.size() > 10 && text[10] != 'T' && text[10] != 't')) {
    return fail(Errc::invalid_argument, std::string(option) + ": " + quote_name(text) +
                                            " is not a time; " + std::string(kInstantForm));
  }
  if (*month < 1 || *month > 12) {
    return bad_instant(option, text, "month " + std::to_string(*month) + " does not exist");
  }
  if (*day < 1 || *day > days_in_month(*year, *month)) {
    return bad_instant(option, text,
                       std::string(text.substr(0, 7)) + " has " +
                           std::to_string(days_in_month(*year, *month)) + " days");
  }
  std::int64_t seconds = days_from_civil(*year, *month, *day) * 86'400;
  std::int64_t offset = 0;
  if (text.size() > 10) {
    const auto hour = fixed_digits(text, 11, 2);
    const auto minute = fixed_digits(text, 14, 2);
    const auto second = fixed_digits(text, 17, 2);
    if (!hour || !minute || !second || text[13] != ':' || text[16] != ':') {
      return fail(Errc::invalid_argument, std::string(option) + ": " + quote_name(text) +
                                              " is not a time; " + std::string(kInstantForm));
    }
    if (*hour > 23) return bad_instant(option, text, "hours go from 00 to 23");
    if (*minute > 59) return bad_instant(option, text, "minutes go from 00 to 59");
    if (*second > 59) {
      return bad_instant(option, text, "seconds go from 00 to 59; leap seconds are not accepted");
    }
    seconds += *hour * 3600 + *minute * 60 + *second;
    std::size_t pos = 19;
    // Fractions of a second carry no meaning for certificate validity; RFC 3339 wants a digit.
    if (pos < text.size() && text[pos] == '.') {
      const std::size_t first = ++pos;
      while (pos < text.size() && is_digit(text[pos])) ++pos;
      if (pos == first) return bad_instant(option, text, "a digit must follow the '.'");
    }
    const std::string_view zone = text.substr(pos);
    if (zone.empty()) {
      return fail(Errc::invalid_argument,
                  std::string(option) + ": " + quote_name(text) +
                      " needs a zone: append Z for UTC, e.g. 2027-03-01T00:00:00Z");
    }
    if (zone != "Z" && zone != "z") {
      const auto zone_hours = fixed_digits(zone, 1, 2);
      const auto zone_minutes = fixed_digits(zone, 4, 2);
      if ((zone[0] != '+' && zone[0] != '-') || zone.size() != 6 || zone[3] != ':' || !zone_hours ||
          !zone_minutes) {
        return bad_instant(option, text, "the zone must be Z or an offset like +02:00");
      }
      if (*zone_hours > 23 || *zone_minutes > 59) {
        return bad_instant(option, text, "UTC offsets go from -23:59 to +23:59");
      }
      const std::int64_t zone_seconds = *zone_hours * 3600 + *zone_minutes * 60;
      offset = zone[0] == '+' ? zone_seconds : -zone_seconds;
    }
  }
  seconds -= offset;
  if (seconds < kMinInstant || seconds > kMaxInstant) {
    return bad_instant(option, text, "times before 1970 or after 9999 are not accepted");
  }
  return seconds;
}

}  // namespace getcert::cli
