// Fuzz target: the targets users type (parse_endpoint), and host name normalisation.
// Invariants: a parsed endpoint is well-formed, its to_string() parses back to the same
// endpoint, normalisation is idempotent, and error messages are one safe line.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "getcert/endpoint.hpp"
#include "getcert/text.hpp"
#include "invariant.hpp"

namespace {

using getcert::fuzz::require;

void require_safe_message(const getcert::Error& e) {
  require(e.code == getcert::Errc::invalid_argument, "failure is invalid_argument");
  require(!e.message.empty(), "failure has a message");
  require(getcert::escape_untrusted(e.message) == e.message,
          "the message shows no raw control or invalid bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const std::uint16_t default_port : {std::uint16_t{443}, std::uint16_t{25}}) {
    const auto ep = getcert::parse_endpoint(text, default_port);
    if (!ep) {
      require_safe_message(ep.error());
      continue;
    }
    require(!ep->host.empty(), "a parsed endpoint has a host");
    require(ep->port != 0, "a parsed endpoint has a port");
    require(ep->is_ip == getcert::is_ip_literal(ep->host), "is_ip agrees with is_ip_literal");
    const std::string shown = ep->to_string();
    const auto again = getcert::parse_endpoint(shown, default_port);
    require(again.has_value(), "to_string() parses again");
    require(again->host == ep->host && again->port == ep->port && again->is_ip == ep->is_ip,
            "to_string() parses to the same endpoint");
  }
  const auto name = getcert::normalize_hostname(text);
  if (!name) {
    require_safe_message(name.error());
  } else {
    const auto twice = getcert::normalize_hostname(*name);
    require(twice.has_value() && *twice == *name, "normalize_hostname is idempotent");
  }
  return 0;
}
