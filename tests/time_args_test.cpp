// Durations and instants typed on the command line (cli/time_args): every accepted form, and
// every rejected one with a message that names the option and the accepted form.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include "getcert/certificate.hpp"
#include "time_args.hpp"

using Catch::Matchers::Contains;
using getcert::cli::kMaxDuration;
using getcert::cli::parse_duration;
using getcert::cli::parse_instant;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kSecond{1000};
constexpr milliseconds kDay{86'400'000};

}  // namespace

TEST_CASE("durations: every unit, decimals, and the bare unit", "[cli]") {
  struct Case {
    const char* text;
    milliseconds bare;
    std::int64_t ms;
  };
  const Case cases[] = {
      {"500ms", kSecond, 500},
      {"10s", kSecond, 10'000},
      {"10", kSecond, 10'000},
      {"0", kSecond, 0},
      {"007s", kSecond, 7'000},
      {"2m", kSecond, 120'000},
      {"1h", kSecond, 3'600'000},
      {"30d", kSecond, 2'592'000'000},
      {"2w", kSecond, 1'209'600'000},
      {"30", kDay, 2'592'000'000},
      {"1.5s", kSecond, 1'500},
      {"0.25", kSecond, 250},
      {"1.5d", kSecond, 129'600'000},
      {"0.0001s", kSecond, 0},  // below a millisecond: dropped
      {"1.0009s", kSecond, 1'000},
      {"1.00000000000000000001s", kSecond, 1'000},  // digits past the ninth still checked
      {"36500d", kSecond, kMaxDuration.count()},
      {"36500", kDay, kMaxDuration.count()},
      {"5214.2857w", kSecond, 3'153'599'991'360},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    const auto d = parse_duration("--timeout", c.text, c.bare);
    REQUIRE(d);
    CHECK(d->count() == c.ms);
  }
}

TEST_CASE("durations: NaN, infinities, signs, overflow and garbage are usage errors", "[cli]") {
  const char* const rejected[] = {
      "",
      "nan",
      "NaN",
      "inf",
      "-inf",
      "infinity",
      "-1s",
      "+1s",
      "-0",
      "1e3",
      "1e3s",
      "0x10",
      "0x10s",
      " 10s",
      "10s ",
      "10 s",
      "10S",
      "10sec",
      "10parsecs",
      "s",
      "ms",
      ".5s",
      "5.s",
      "5.",
      "1.2.3s",
      "1,5s",
      "10s10s",
      "10ss",
      "10\n",
      "10s\x1b",
      "٣s",
      "200000d",
      "36501d",
      "5215w",
      "876001h",
      "36500.001d",
      "99999999999999999999999999s",
      "3153600000001ms",
  };
  for (const char* text : rejected) {
    INFO("'" << text << "'");
    const auto d = parse_duration("--timeout", text, kSecond);
    REQUIRE_FALSE(d);
    CHECK(d.error().code == getcert::Errc::invalid_argument);
    CHECK_THAT(d.error().message, Contains("--timeout: '"));
    CHECK(d.error().message.find('\n') == std::string::npos);
    CHECK(d.error().message.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("duration messages name the option, the accepted form and the limit", "[cli]") {
  CHECK(parse_duration("--timeout", "nan", kSecond).error().message ==
        "--timeout: 'nan' is not a duration; use a number with a unit ms|s|m|h|d|w (a bare "
        "number is s), e.g. 10s");
  CHECK_THAT(
      parse_duration("--expires-in", "soon", kDay).error().message,
      Contains("--expires-in: 'soon'") && Contains("a bare number is d") && Contains("e.g. 30d"));
  CHECK(parse_duration("--timeout", "200000d", kSecond).error().message ==
        "--timeout: '200000d' is too long; the longest accepted duration is 36500d (100 years)");
  CHECK_THAT(parse_duration("--timeout", "10s\x1b[2J", kSecond).error().message,
             Contains("'10s\\x1b[2J'"));
}

TEST_CASE("instants: RFC 3339 with Z or an offset, and plain dates", "[cli]") {
  struct Case {
    const char* text;
    const char* utc;  // the same instant as format_utc prints it
  };
  const Case cases[] = {
      {"2027-03-01T00:00:00Z", "2027-03-01T00:00:00Z"},
      {"2027-03-01t00:00:00z", "2027-03-01T00:00:00Z"},
      {"2027-03-01", "2027-03-01T00:00:00Z"},
      {"2027-03-01T02:00:00+02:00", "2027-03-01T00:00:00Z"},
      {"2027-02-28T22:30:00-01:30", "2027-03-01T00:00:00Z"},
      {"2027-03-01T00:00:00-00:00", "2027-03-01T00:00:00Z"},
      {"2027-03-01T00:00:00+23:59", "2027-02-28T00:01:00Z"},
      {"2027-03-01T00:00:00.123456Z", "2027-03-01T00:00:00Z"},
      {"2027-03-01T00:00:00.9+01:00", "2027-02-28T23:00:00Z"},
      {"2028-02-29", "2028-02-29T00:00:00Z"},
      {"2000-02-29T23:59:59Z", "2000-02-29T23:59:59Z"},
      {"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
      {"2100-01-01T00:00:00Z", "2100-01-01T00:00:00Z"},
      {"9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    const auto t = parse_instant("--at", c.text);
    REQUIRE(t);
    CHECK(getcert::format_utc(*t) == c.utc);
  }
  CHECK(parse_instant("--at", "1970-01-01T00:00:00Z").value() == 0);
  CHECK(parse_instant("--at", "2027-03-01T00:00:00Z").value() == 1803859200);
}

TEST_CASE("instants: impossible dates, out-of-range fields and offsets are usage errors", "[cli]") {
  struct Case {
    const char* text;
    const char* why;  // part of the message
  };
  const Case cases[] = {
      {"", "is not a time"},
      {"tomorrow", "is not a time"},
      {"next tuesday", "is not a time"},
      {"2027-3-1", "is not a time"},
      {"27-03-01", "is not a time"},
      {" 2027-03-01", "is not a time"},
      {"2027-03-01 ", "is not a time"},
      {"2027/03/01", "is not a time"},
      {"2027-03-01T", "is not a time"},
      {"2027-03-01T00:00Z", "is not a time"},
      {"2027-03-01 00:00:00Z", "is not a time"},
      {"+2027-03-01", "is not a time"},
      {"2027-02-30", "2027-02 has 28 days"},
      {"2027-02-29", "2027-02 has 28 days"},
      {"2100-02-29", "2100-02 has 28 days"},
      {"2027-04-31T00:00:00Z", "2027-04 has 30 days"},
      {"2027-01-00", "2027-01 has 31 days"},
      {"2027-13-01", "month 13 does not exist"},
      {"2027-00-01", "month 0 does not exist"},
      {"2027-03-01T24:00:00Z", "hours go from 00 to 23"},
      {"2027-03-01T00:60:00Z", "minutes go from 00 to 59"},
      {"2027-03-01T00:00:60Z", "leap seconds are not accepted"},
      {"2027-03-01T00:00:61Z", "seconds go from 00 to 59"},
      {"2027-03-01T00:00:00", "needs a zone"},
      {"2027-03-01T00:00:00.Z", "a digit must follow"},
      {"2027-03-01T00:00:00+99:99", "UTC offsets go from -23:59 to +23:59"},
      {"2027-03-01T00:00:00+24:00", "UTC offsets go from -23:59 to +23:59"},
      {"2027-03-01T00:00:00-00:60", "UTC offsets go from -23:59 to +23:59"},
      {"2027-03-01T00:00:00+0200", "the zone must be Z or an offset"},
      {"2027-03-01T00:00:00+02", "the zone must be Z or an offset"},
      {"2027-03-01T00:00:00+02:00:00", "the zone must be Z or an offset"},
      {"2027-03-01T00:00:00UTC", "the zone must be Z or an offset"},
      {"2027-03-01T00:00:00ZZ", "the zone must be Z or an offset"},
      {"2027-03-01T00:00:00Z\n", "the zone must be Z or an offset"},
      {"1969-12-31T23:59:59Z", "before 1970 or after 9999"},
      {"1970-01-01T00:00:00+00:01", "before 1970 or after 9999"},
      {"9999-12-31T23:59:59-00:01", "before 1970 or after 9999"},
      {"0000-01-01", "before 1970 or after 9999"},
  };
  for (const auto& c : cases) {
    INFO("'" << c.text << "'");
    const auto t = parse_instant("--at", c.text);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == getcert::Errc::invalid_argument);
    CHECK_THAT(t.error().message, Contains("--at: '") && Contains(c.why));
    CHECK_THAT(t.error().message, Contains("2027-03-01T00:00:00Z"));
    CHECK(t.error().message.find('\n') == std::string::npos);
  }
}
