#include "getcert/endpoint.hpp"

#include <arpa/inet.h>
#include <idn2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "getcert/text.hpp"
#include "internal/host_port.hpp"
#include "internal/owners.hpp"
#include "internal/try.hpp"

namespace getcert {
namespace {

struct SchemePort {
  std::string_view scheme;
  std::uint16_t port;
};

// URL schemes whose default port speaks TLS from the first byte.
constexpr std::array<SchemePort, 8> kTlsSchemes{{{"https", 443},
                                                 {"wss", 443},
                                                 {"grpcs", 443},
                                                 {"h2", 443},
                                                 {"ldaps", 636},
                                                 {"imaps", 993},
                                                 {"pop3s", 995},
                                                 {"smtps", 465}}};

Result<std::uint16_t> parse_port(std::string_view text, std::string_view whole) {
  unsigned value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return fail(Errc::invalid_argument,
                "invalid port " + quote_name(text) + " in " + quote_name(whole));
  }
  if (value < 1 || value > 65535) {
    return fail(Errc::invalid_argument,
                "port " + std::string(text) + " is out of range 1-65535 in " + quote_name(whole));
  }
  return static_cast<std::uint16_t>(value);
}

bool is_hostname(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t label_len = 0;
  for (const char c : host) {
    if (c == '.') {
      if (label_len == 0) return false;
      label_len = 0;
      continue;
    }
    const auto uc = static_cast<unsigned char>(c);
    // Letters, digits, '-' and '_' (seen in real internal names); bytes >= 0x80 are UTF-8 of
    // an internationalised name, which stays as typed.
    if (std::isalnum(uc) == 0 && c != '-' && c != '_' && uc < 0x80) return false;
    if (++label_len > 63) return false;
  }
  // An empty last label: "name.." (one trailing dot is removed before this check).
  return label_len > 0;
}

}  // namespace

Result<std::string> normalize_hostname(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (!is_hostname(name)) {
    return fail(Errc::invalid_argument,
                quote_name(name) + " is not a valid host name or IP address");
  }
  const bool ascii = std::all_of(name.begin(), name.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  std::string out;
  if (ascii) {
    out.assign(name);
  } else {
    char* converted = nullptr;
    const std::string input(name);
    const int rc =
        idn2_to_ascii_8z(input.c_str(), &converted, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
    const internal::Idn2String owned(converted);
    if (rc != IDN2_OK) {
      return fail(Errc::invalid_argument, quote_name(input) +
                                              " is not a valid internationalised "
                                              "domain name: " +
                                              idn2_strerror(rc));
    }
    out = converted;
    // Mapping can remove characters (U+034F, the combining grapheme joiner, maps to nothing):
    // what remains must still be a host name, or an empty host would pass as parsed.
    if (!is_hostname(out)) {
      return fail(Errc::invalid_argument, quote_name(input) +
                                              " is not a valid internationalised domain name: "
                                              "it maps to " +
                                              quote_name(out));
    }
  }
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_ip_literal(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return false;
  // inet_pton reads up to a NUL: "::1\0junk" must not pass as "::1" with the junk kept.
  if (text.find('\0') != std::string_view::npos) return false;
  const std::string s(text);
  std::array<unsigned char, 16> buf{};
  return inet_pton(AF_INET, s.c_str(), buf.data()) == 1 ||
         inet_pton(AF_INET6, s.c_str(), buf.data()) == 1;
}

std::string Endpoint::to_string() const { return internal::host_port(host, port); }

Result<Endpoint> parse_endpoint(std::string_view text, std::uint16_t default_port) {
  const std::string_view whole = text;
  Endpoint ep;
  ep.port = default_port;
  if (text.empty()) return fail(Errc::invalid_argument, "empty target: expected HOST[:PORT]");
  if (text.find_first_of(" \t\r\n") != std::string_view::npos) {
    return fail(Errc::invalid_argument, "target " + quote_name(whole) + " contains whitespace");
  }

  // URL form: scheme://[userinfo@]host[:port][/path][?query][#fragment]
  if (const auto sep = text.find("://"); sep != std::string_view::npos) {
    std::string scheme(text.substr(0, sep));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const auto* known = std::find_if(kTlsSchemes.begin(), kTlsSchemes.end(),
                                     [&](const SchemePort& s) { return s.scheme == scheme; });
    if (known == kTlsSchemes.end()) {
      return fail(Errc::invalid_argument, "unsupported URL scheme " + quote_name(scheme + "://") +
                                              " in " + quote_name(whole) +
                                              " (use https://, or HOST:PORT)");
    }
    ep.port = known->port;
    text.remove_prefix(sep + 3);
    text = text.substr(0, text.find_first_of("/?#"));
    if (const auto at = text.rfind('@'); at != std::string_view::npos) text.remove_prefix(at + 1);
  }

  std::string_view host;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      return fail(Errc::invalid_argument, "missing ']' in " + quote_name(whole));
    }
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return fail(Errc::invalid_argument,
                    "unexpected " + quote_name(rest) + " after ']' in " + quote_name(whole));
      }
      GETCERT_TRY_ASSIGN(auto port, parse_port(rest.substr(1), whole));
      ep.port = port;
    }
    if (!is_ip_literal(host) || host.find(':') == std::string_view::npos) {
      return fail(Errc::invalid_argument, quote_name(host) + " in brackets is not an IPv6 address");
    }
  } else if (std::count(text.begin(), text.end(), ':') > 1) {
    // Several colons without brackets: only a bare IPv6 address makes sense.
    if (!is_ip_literal(text)) {
      return fail(Errc::invalid_argument,
                  quote_name(whole) + " is not a valid IPv6 address (write [ADDR]:PORT)");
    }
    host = text;
  } else {
    const auto colon = text.find(':');
    host = text.substr(0, colon);
    if (colon != std::string_view::npos) {
      GETCERT_TRY_ASSIGN(auto port, parse_port(text.substr(colon + 1), whole));
      ep.port = port;
    }
  }

  if (host.empty()) return fail(Errc::invalid_argument, "no host in " + quote_name(whole));
  if (is_ip_literal(host)) {
    ep.is_ip = true;
    ep.host = std::string(host);
    return ep;
  }
  // A trailing dot marks a fully qualified name; it is not part of the name we send or match.
  GETCERT_TRY_ASSIGN(auto name, normalize_hostname(host));
  // "127.0.0.1." or full-width digits normalise to an address: it is one, not a DNS name (no
  // SNI, matched against IP SANs).
  ep.is_ip = is_ip_literal(name);
  ep.host = std::move(name);
  return ep;
}

}  // namespace getcert
