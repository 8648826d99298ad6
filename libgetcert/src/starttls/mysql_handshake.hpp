#pragma once

// The first packet a MySQL or MariaDB server sends (the initial handshake, protocol 10, or an
// ERR packet when it refuses the connection), and the SSLRequest that answers it. Pure (no
// I/O), so a server's bytes can be tested and fuzzed without a socket.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "getcert/error.hpp"

namespace getcert::detail {

// Capability flags (MySQL's CLIENT_*; MariaDB shares the lower 32 bits).
inline constexpr std::uint32_t kMysqlLongPassword = 0x00000001;
inline constexpr std::uint32_t kMysqlLongFlag = 0x00000004;
inline constexpr std::uint32_t kMysqlProtocol41 = 0x00000200;
inline constexpr std::uint32_t kMysqlSsl = 0x00000800;
inline constexpr std::uint32_t kMysqlTransactions = 0x00002000;
inline constexpr std::uint32_t kMysqlSecureConnection = 0x00008000;

// A packet's payload before TLS. The initial handshake is about 100 bytes and an ERR packet's
// message at most 512; 4 KiB is far above both and bounds what a hostile server makes us read.
inline constexpr std::size_t kMaxMysqlGreeting = 4096;

struct MysqlGreeting {
  // An ERR packet instead of a handshake: the server refused the connection ("Too many
  // connections", "Host ... is not allowed to connect").
  bool refused = false;
  std::uint16_t error_code = 0;
  std::string error_message;

  std::string server_version;      // "10.11.6-MariaDB-0+deb12u1", "8.0.36"
  std::uint32_t capabilities = 0;  // the lower 16 bits, and the upper 16 when the server sent them
  std::uint8_t charset = 0;        // the server's default collation id; 0 when not sent
};

// The 4-byte packet header: payload length (little-endian, 3 bytes) and sequence id.
struct MysqlPacketHeader {
  std::size_t length = 0;
  std::uint8_t sequence = 0;
};
MysqlPacketHeader parse_mysql_packet_header(std::string_view four_bytes);

// Parses the payload of the server's first packet. Fails with malformed_input when it is
// neither a protocol 10 handshake nor an ERR packet, and with unsupported for protocol 9 (MySQL
// before 3.21.0, which has no SSL).
Result<MysqlGreeting> parse_mysql_greeting(std::string_view payload);

// The SSLRequest packet (header included, sequence id 1) for a server that offered
// CLIENT_SSL: the capabilities getcert needs that the server has, in the 4.1 format, or the 3.20
// format for servers without CLIENT_PROTOCOL_41.
std::string mysql_ssl_request(const MysqlGreeting& greeting);

}  // namespace getcert::detail
