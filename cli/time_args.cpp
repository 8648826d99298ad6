#include "time_args.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <ctime>
#include <string_view>

namespace getcert::cli {

Result<std::chrono::milliseconds> parse_duration(const std::string& text,
                                                 std::chrono::milliseconds bare_unit) {
  using std::chrono::milliseconds;
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || value < 0) {
    return fail(Errc::invalid_argument, "invalid duration '" + text + "' (e.g. 10s, 500ms, 30d)");
  }
  const std::string unit(ptr, end);
  struct Unit {
    const char* name;
    double ms;
  };
  static constexpr std::array<Unit, 6> kUnits{
      {{"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}, {"d", 86400e3}, {"w", 604800e3}}};
  auto factor = static_cast<double>(bare_unit.count());
  if (!unit.empty()) {
    factor = 0;
    for (const auto& u : kUnits) {
      if (unit == u.name) factor = u.ms;
    }
    if (factor == 0) {
      return fail(Errc::invalid_argument,
                  "unknown unit '" + unit + "' in duration '" + text + "' (use ms, s, m, h, d, w)");
    }
  }
  const double ms = value * factor;
  if (ms > 1e15) return fail(Errc::invalid_argument, "duration '" + text + "' is too long");
  return milliseconds(static_cast<std::int64_t>(ms));
}

Result<std::int64_t> parse_instant(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) {
    tm = {};
    rest = strptime(text.c_str(), "%Y-%m-%d", &tm);
    if (rest == nullptr || *rest != '\0') {
      return fail(Errc::invalid_argument,
                  "invalid time '" + text + "' (use RFC 3339, e.g. 2027-03-01T00:00:00Z)");
    }
    return static_cast<std::int64_t>(timegm(&tm));
  }
  // Fractional seconds carry no meaning for certificate validity.
  if (*rest == '.') {
    ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  std::int64_t offset = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if (*rest == '+' || *rest == '-') {
    const std::string_view zone(rest);
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (zone.size() != 6 || zone[3] != ':' || !digit(zone[1]) || !digit(zone[2]) ||
        !digit(zone[4]) || !digit(zone[5])) {
      return fail(Errc::invalid_argument, "invalid UTC offset in '" + text + "'");
    }
    const std::int64_t hh = (zone[1] - '0') * 10 + (zone[2] - '0');
    const std::int64_t mm = (zone[4] - '0') * 10 + (zone[5] - '0');
    offset = (*rest == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    rest += 6;
  } else {
    return fail(Errc::invalid_argument,
                "time '" + text + "' needs a zone: append Z for UTC (e.g. 2027-03-01T00:00:00Z)");
  }
  if (*rest != '\0') return fail(Errc::invalid_argument, "trailing text in time '" + text + "'");
  return static_cast<std::int64_t>(timegm(&tm)) - offset;
}

}  // namespace getcert::cli
