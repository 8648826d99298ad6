#include "net/socks5.hpp"

#include <arpa/inet.h>

#include <array>

#include "getcert/endpoint.hpp"
#include "internal/encoding.hpp"
#include "internal/try.hpp"
#include "net/line_channel.hpp"

namespace getcert::detail {
namespace {

constexpr std::uint8_t kVersion = 5;
constexpr std::uint8_t kNoAuthentication = 0x00;
constexpr std::uint8_t kUsernamePassword = 0x02;
constexpr std::uint8_t kNoAcceptableMethod = 0xFF;
constexpr std::uint8_t kUserPassVersion = 1;
constexpr std::uint8_t kConnect = 1;
constexpr std::uint8_t kIpv4 = 1;
constexpr std::uint8_t kDomainName = 3;
constexpr std::uint8_t kIpv6 = 4;

std::string hex_byte(std::uint8_t b) { return "0x" + internal::hex_upper(&b, 1); }

std::uint8_t byte_at(const std::string& bytes, std::size_t i) {
  return static_cast<std::uint8_t>(bytes[i]);
}

Result<std::string> address_field(const std::string& host) {
  std::string field;
  std::array<unsigned char, 16> raw{};
  if (inet_pton(AF_INET, host.c_str(), raw.data()) == 1) {
    field.push_back(static_cast<char>(kIpv4));
    field.append(reinterpret_cast<const char*>(raw.data()), 4);
  } else if (inet_pton(AF_INET6, host.c_str(), raw.data()) == 1) {
    field.push_back(static_cast<char>(kIpv6));
    field.append(reinterpret_cast<const char*>(raw.data()), 16);
  } else {
    // The name travels in one length byte.
    if (host.empty() || host.size() > 255) {
      return fail(Errc::invalid_argument, "a SOCKS5 proxy cannot be given a host name of " +
                                              std::to_string(host.size()) + " bytes");
    }
    field.push_back(static_cast<char>(kDomainName));
    field.push_back(static_cast<char>(host.size()));
    field += host;
  }
  return field;
}

}  // namespace

std::string socks5_reply_text(std::uint8_t code) {
  switch (code) {
    case 0:
      return "succeeded";
    case 1:
      return "general SOCKS server failure";
    case 2:
      return "connection not allowed by ruleset";
    case 3:
      return "network unreachable";
    case 4:
      return "host unreachable";
    case 5:
      return "connection refused";
    case 6:
      return "TTL expired";
    case 7:
      return "command not supported";
    case 8:
      return "address type not supported";
    default:
      return "unassigned reply " + hex_byte(code);
  }
}

Result<std::uint8_t> socks5_connect(int fd, Clock::time_point deadline,
                                    const Socks5Request& request) {
  const std::string proxy = "proxy " + request.proxy_display;
  LineChannel ch(fd, deadline, proxy, "the SOCKS5 exchange", Errc::connect_failed);
  const bool credentials = !request.username.empty() || !request.password.empty();
  // RFC 1929 carries each in one length byte.
  if (request.username.size() > 255 || request.password.size() > 255) {
    return fail(Errc::invalid_argument,
                "a SOCKS5 username and password are at most 255 bytes each");
  }
  GETCERT_TRY_ASSIGN(auto address, address_field(request.host));

  std::string greeting{static_cast<char>(kVersion), 1,
                       static_cast<char>(credentials ? kUsernamePassword : kNoAuthentication)};
  GETCERT_TRY(ch.send(greeting));
  GETCERT_TRY_ASSIGN(auto choice, ch.read_bytes(2));
  if (byte_at(choice, 0) != kVersion) {
    return fail(Errc::connect_failed, proxy + " does not speak SOCKS5 (its answer starts with " +
                                          hex_byte(byte_at(choice, 0)) +
                                          "); is it an HTTP proxy (http://)?");
  }
  const std::uint8_t method = byte_at(choice, 1);
  if (method == kNoAcceptableMethod) {
    return fail(Errc::connect_failed,
                proxy + " accepts none of the authentication methods getcert offered" +
                    (credentials ? std::string(" (username and password)")
                                 : std::string(" (none): does it want a username and password? "
                                               "--proxy socks5://user:password@host:port")));
  }
  if (method == kUsernamePassword && credentials) {
    std::string auth{static_cast<char>(kUserPassVersion)};
    auth.push_back(static_cast<char>(request.username.size()));
    auth += request.username;
    auth.push_back(static_cast<char>(request.password.size()));
    auth += request.password;
    GETCERT_TRY(ch.send(auth));
    GETCERT_TRY_ASSIGN(auto status, ch.read_bytes(2));
    if (byte_at(status, 1) != 0) {
      return fail(Errc::connect_failed, proxy + " rejected the username and password (status " +
                                            hex_byte(byte_at(status, 1)) + ")");
    }
  } else if (method != kNoAuthentication) {
    return fail(Errc::connect_failed, proxy + " chose an authentication method getcert did not " +
                                          "offer (" + hex_byte(method) + ")");
  }

  std::string connect{static_cast<char>(kVersion), static_cast<char>(kConnect), 0};
  connect += address;
  internal::append_be16(connect, request.port);
  GETCERT_TRY(ch.send(connect));
  GETCERT_TRY_ASSIGN(auto head, ch.read_bytes(4));
  if (byte_at(head, 0) != kVersion) {
    return fail(Errc::connect_failed,
                proxy + " answered the CONNECT request with version " + hex_byte(byte_at(head, 0)));
  }
  const std::uint8_t reply = byte_at(head, 1);
  // The bound address is read in full even on a refusal, so that nothing of it can be taken
  // for the target's first bytes.
  std::size_t rest = 0;
  switch (byte_at(head, 3)) {
    case kIpv4:
      rest = 4 + 2;
      break;
    case kIpv6:
      rest = 16 + 2;
      break;
    case kDomainName: {
      GETCERT_TRY_ASSIGN(auto len, ch.read_bytes(1));
      rest = byte_at(len, 0) + std::size_t{2};
      break;
    }
    default:
      if (reply != 0) return reply;  // some proxies end a refusal early; the reply is enough
      return fail(Errc::connect_failed,
                  proxy + " answered with an unknown address type " + hex_byte(byte_at(head, 3)));
  }
  if (auto bound = ch.read_bytes(rest); !bound) {
    if (reply != 0) return reply;
    return tl::unexpected(bound.error());
  }
  return reply;
}

}  // namespace getcert::detail
