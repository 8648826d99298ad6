// Fuzz target: the first packet of a MySQL/MariaDB server (starttls/mysql_handshake.hpp) and the
// SSLRequest built from it.
//
// Input: the packet as the server sends it (4-byte header, then the payload).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "invariant.hpp"
#include "net/replies.hpp"
#include "starttls/mysql_handshake.hpp"

using getcert::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace d = getcert::detail;
  const std::string_view wire(reinterpret_cast<const char*>(data), size);
  if (wire.size() < 4) return 0;
  const auto header = d::parse_mysql_packet_header(wire.substr(0, 4));
  require(header.length < (std::size_t{1} << 24U), "a packet length has 24 bits");
  if (header.length > d::kMaxMysqlGreeting) return 0;  // the caller refuses it unread
  const std::string_view payload = wire.substr(4, header.length);
  auto greeting = d::parse_mysql_greeting(payload);
  if (!greeting) return 0;
  require(greeting->server_version.size() < payload.size() || greeting->refused,
          "the version lies inside the packet");
  for (const char c : getcert::quote_untrusted(greeting->server_version + greeting->error_message,
                                               d::kPeerQuoteMax)) {
    require(static_cast<unsigned char>(c) >= 0x20, "quoted server text is terminal-safe");
  }
  if (greeting->refused) return 0;
  const std::string request = d::mysql_ssl_request(*greeting);
  const auto out = d::parse_mysql_packet_header(request);
  require(out.sequence == 1, "the SSLRequest answers packet 0");
  require(out.length + 4 == request.size(), "the SSLRequest's header counts its payload");
  const bool v41 = (greeting->capabilities & d::kMysqlProtocol41) != 0;
  require(out.length == (v41 ? 32U : 5U), "the SSLRequest has the size of its format");
  require((static_cast<unsigned char>(request[5]) & 0x08U) != 0, "the SSLRequest asks for SSL");
  return 0;
}
