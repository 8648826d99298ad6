#include "starttls/mysql_handshake.hpp"

namespace getcert::detail {
namespace {

std::uint32_t byte_at(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]);
}

void put_le(std::string& out, std::uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out += static_cast<char>((value >> (8 * i)) & 0xFFU);
  }
}

tl::unexpected<Error> malformed(const std::string& why) {
  return fail(Errc::malformed_input, "sent a malformed MySQL handshake (" + why + ")");
}

}  // namespace

MysqlPacketHeader parse_mysql_packet_header(std::string_view four_bytes) {
  MysqlPacketHeader h;
  if (four_bytes.size() < 4) return h;
  h.length =
      byte_at(four_bytes, 0) | (byte_at(four_bytes, 1) << 8U) | (byte_at(four_bytes, 2) << 16U);
  h.sequence = static_cast<std::uint8_t>(byte_at(four_bytes, 3));
  return h;
}

Result<MysqlGreeting> parse_mysql_greeting(std::string_view p) {
  if (p.empty()) return malformed("an empty packet");
  MysqlGreeting g;
  const auto protocol = byte_at(p, 0);
  if (protocol == 0xFF) {
    // ERR: 0xFF, error code (2), then, from 4.1 on, maybe '#' and a 5-character SQL state.
    if (p.size() < 3) return malformed("a truncated error packet");
    g.refused = true;
    g.error_code = static_cast<std::uint16_t>(byte_at(p, 1) | (byte_at(p, 2) << 8U));
    std::string_view message = p.substr(3);
    if (message.size() >= 6 && message[0] == '#') message.remove_prefix(6);
    g.error_message = std::string(message);
    return g;
  }
  if (protocol == 9) {
    return fail(Errc::unsupported, "speaks MySQL protocol 9 (MySQL before 3.21), which has no SSL");
  }
  if (protocol != 10) {
    return malformed("protocol version " + std::to_string(protocol) + ", expected 10");
  }
  const auto nul = p.find('\0', 1);
  if (nul == std::string_view::npos) return malformed("an unterminated server version");
  g.server_version = std::string(p.substr(1, nul - 1));
  // connection id (4), auth-plugin-data-part-1 (8), filler (1), capability flags lower (2)
  std::size_t pos = nul + 1 + 4 + 8 + 1;
  if (pos + 2 > p.size()) return malformed("no capability flags");
  g.capabilities = byte_at(p, pos) | (byte_at(p, pos + 1) << 8U);
  pos += 2;
  // Since 4.1: character set (1), status flags (2), capability flags upper (2), ...
  if (pos < p.size()) g.charset = static_cast<std::uint8_t>(byte_at(p, pos));
  if (pos + 5 <= p.size()) {
    g.capabilities |= (byte_at(p, pos + 3) << 16U) | (byte_at(p, pos + 4) << 24U);
  }
  return g;
}

std::string mysql_ssl_request(const MysqlGreeting& greeting) {
  constexpr std::uint32_t kWanted = kMysqlLongPassword | kMysqlLongFlag | kMysqlProtocol41 |
                                    kMysqlSsl | kMysqlTransactions | kMysqlSecureConnection;
  const std::uint32_t caps = (kWanted & greeting.capabilities) | kMysqlSsl;
  constexpr std::uint32_t kMaxPacket = 16U * 1024 * 1024;
  std::string payload;
  if ((greeting.capabilities & kMysqlProtocol41) != 0) {
    // HandshakeResponse41 cut after the character set: capabilities (4), max packet size (4),
    // character set (1), 23 reserved bytes (MariaDB reads its extended capabilities there).
    put_le(payload, caps, 4);
    put_le(payload, kMaxPacket, 4);
    payload += static_cast<char>(greeting.charset != 0 ? greeting.charset : 33);  // utf8
    payload.append(23, '\0');
  } else {
    // HandshakeResponse320: capabilities (2), max packet size (3).
    put_le(payload, caps & 0xFFFFU, 2);
    put_le(payload, kMaxPacket - 1, 3);
  }
  std::string packet;
  put_le(packet, static_cast<std::uint32_t>(payload.size()), 3);
  packet += '\x01';  // sequence id: the answer to the server's packet 0
  return packet + payload;
}

}  // namespace getcert::detail
