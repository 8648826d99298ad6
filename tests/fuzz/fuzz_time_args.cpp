// Fuzz target: the durations and instants typed on the command line (cli/time_args).
// Invariants: results stay within the documented limits, a duration written back in
// milliseconds and an instant written back by format_utc() parse to the same value, and
// messages are one safe line.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "getcert/certificate.hpp"
#include "getcert/text.hpp"
#include "invariant.hpp"
#include "time_args.hpp"

namespace {

using getcert::fuzz::require;

void require_safe_message(const getcert::Error& e) {
  require(e.code == getcert::Errc::invalid_argument, "failure is invalid_argument");
  require(getcert::escape_untrusted(e.message) == e.message,
          "the message shows no raw control or invalid bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using getcert::cli::parse_duration;
  using getcert::cli::parse_instant;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const std::chrono::milliseconds bare : {std::chrono::milliseconds(std::chrono::seconds(1)),
                                               std::chrono::milliseconds(std::chrono::hours(24))}) {
    const auto d = parse_duration("--timeout", text, bare);
    if (!d) {
      require_safe_message(d.error());
      continue;
    }
    require(d->count() >= 0 && *d <= getcert::cli::kMaxDuration, "a duration is in range");
    const auto again = parse_duration("--timeout", std::to_string(d->count()) + "ms", bare);
    require(again.has_value() && *again == *d, "a duration in ms parses to itself");
  }
  const auto t = parse_instant("--at", text);
  if (!t) {
    require_safe_message(t.error());
    return 0;
  }
  require(*t >= getcert::cli::kMinInstant && *t <= getcert::cli::kMaxInstant,
          "an instant is in range");
  const auto again = parse_instant("--at", getcert::format_utc(*t));
  require(again.has_value() && *again == *t, "format_utc() of an instant parses to itself");
  return 0;
}
