// Fuzz target: the reader of an LDAP server's answer to the StartTLS extended request (BER: the
// messageID, then an ExtendedResponse holding an LDAPResult), and the names and quoting that the
// refusal message is made of.
//
// Input: the contents of the LDAPMessage SEQUENCE, which is what the STARTTLS exchange reads
// after the SEQUENCE's tag and length (seeds/ldap: slapd's real answers, and edge cases).

#include <cstddef>
#include <cstdint>
#include <string>

#include "invariant.hpp"
#include "net/replies.hpp"

using getcert::fuzz::require;

namespace {

// Quoted peer text is one terminal-safe line.
bool terminal_safe(const std::string& text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string contents(reinterpret_cast<const char*>(data), size);
  const auto result = getcert::detail::parse_ldap_extended_response(contents);
  const auto again = getcert::detail::parse_ldap_extended_response(contents);
  require(result.has_value() == again.has_value(), "parsing is deterministic");
  if (!result) {
    require(result.error().code == getcert::Errc::malformed_input, "failures are malformed_input");
    require(!result.error().message.empty() && terminal_safe(result.error().message),
            "failure messages are one line");
    return 0;
  }
  require(result->code == again->code && result->diagnostic == again->diagnostic,
          "parsing is deterministic");
  // messageID, resultCode, matchedDN and the tags and lengths around them take at least 11
  // bytes besides the diagnostic.
  require(result->diagnostic.size() + 11 <= size, "the diagnostic lies within the input");
  const std::string name = getcert::detail::ldap_result_name(result->code);
  require(terminal_safe(name), "result names are plain words");
  require(result->code != 0 || name == "success", "result 0 is success");
  const std::string quoted =
      getcert::quote_untrusted(result->diagnostic, getcert::detail::kPeerQuoteMax);
  require(terminal_safe(quoted), "a quoted diagnostic is terminal-safe");
  // 80 bytes at most, each escaped to at most 4 characters, in quotes, maybe with "...".
  require(quoted.size() <= 2 + 4 * 80 + 3, "a quoted diagnostic is shortened");
  return 0;
}
