#include "starttls/tds.hpp"

#include "internal/encoding.hpp"

namespace getcert::detail {
namespace {

// PRELOGIN option tokens (2.2.6.5).
constexpr std::uint8_t kOptVersion = 0x00;
constexpr std::uint8_t kOptEncryption = 0x01;
constexpr std::uint8_t kOptInstOpt = 0x02;
constexpr std::uint8_t kOptThreadId = 0x03;
constexpr std::uint8_t kOptMars = 0x04;
constexpr std::uint8_t kOptTerminator = 0xFF;
constexpr std::size_t kOptionEntrySize = 5;  // token, offset (2), length (2)

tl::unexpected<Error> malformed(const std::string& why) {
  return fail(Errc::malformed_input, "sent a malformed PRELOGIN answer (" + why + ")");
}

}  // namespace

Result<TdsHeader> parse_tds_header(std::string_view eight_bytes) {
  if (eight_bytes.size() < kTdsHeaderSize) {
    return fail(Errc::malformed_input, "sent a truncated TDS packet header");
  }
  TdsHeader h;
  h.type = static_cast<std::uint8_t>(eight_bytes[0]);
  h.status = static_cast<std::uint8_t>(eight_bytes[1]);
  h.length = internal::read_be16(eight_bytes, 2);
  if (h.length < kTdsHeaderSize) {
    return fail(Errc::malformed_input, "sent a TDS packet whose length (" +
                                           std::to_string(h.length) + ") is below its header's");
  }
  return h;
}

std::string tds_packet(std::uint8_t type, std::uint8_t status, std::uint8_t packet_id,
                       std::string_view payload) {
  std::string out;
  out.reserve(kTdsHeaderSize + payload.size());
  out += static_cast<char>(type);
  out += static_cast<char>(status);
  internal::append_be16(out, static_cast<std::uint16_t>(kTdsHeaderSize + payload.size()));
  out.append(2, '\0');  // SPID: the server's process id, unknown to a client
  out += static_cast<char>(packet_id);
  out += '\0';  // window: unused
  out.append(payload);
  return out;
}

std::string tds_prelogin_request() {
  struct Option {
    std::uint8_t token;
    std::string data;
  };
  const std::array<Option, 5> options{{
      // The client's version is informational; getcert has no SQL Server driver version.
      {kOptVersion, std::string(6, '\0')},
      {kOptEncryption, std::string(1, static_cast<char>(kTdsEncryptOn))},
      {kOptInstOpt, std::string(1, '\0')},  // the default instance
      {kOptThreadId, std::string(4, '\0')},
      {kOptMars, std::string(1, '\0')},
  }};
  std::string table;
  std::string data;
  const std::size_t data_start = options.size() * kOptionEntrySize + 1;
  for (const auto& o : options) {
    table += static_cast<char>(o.token);
    internal::append_be16(table, static_cast<std::uint16_t>(data_start + data.size()));
    internal::append_be16(table, static_cast<std::uint16_t>(o.data.size()));
    data += o.data;
  }
  table += static_cast<char>(kOptTerminator);
  return tds_packet(kTdsPrelogin, kTdsEndOfMessage, 1, table + data);
}

Result<PreloginAnswer> parse_prelogin(std::string_view p) {
  PreloginAnswer out;
  std::array<bool, 256> seen{};
  std::size_t pos = 0;
  for (;;) {
    if (pos >= p.size()) return malformed("no TERMINATOR");
    const auto token = static_cast<std::uint8_t>(p[pos]);
    if (token == kOptTerminator) break;
    if (pos + kOptionEntrySize > p.size()) return malformed("a truncated option");
    const std::size_t offset = internal::read_be16(p, pos + 1);
    const std::size_t length = internal::read_be16(p, pos + 3);
    pos += kOptionEntrySize;
    if (offset > p.size() || length > p.size() - offset) {
      return malformed("option " + tds_byte_text(token) + " lies outside the message");
    }
    if (seen[token]) return malformed("option " + tds_byte_text(token) + " appears twice");
    seen[token] = true;
    const std::string_view value = p.substr(offset, length);
    if (token == kOptEncryption) {
      if (length != 1) return malformed("ENCRYPTION is not one byte");
      out.encryption = static_cast<std::uint8_t>(value[0]);
    } else if (token == kOptVersion) {
      if (length < 6) return malformed("VERSION is shorter than 6 bytes");
      // UL_VERSION is sent as major, minor, then the build number big-endian; US_SUBBUILD
      // follows.
      out.version = std::array<std::uint16_t, 4>{
          static_cast<unsigned char>(value[0]), static_cast<unsigned char>(value[1]),
          internal::read_be16(value, 2),
          static_cast<std::uint16_t>(static_cast<unsigned char>(value[4]) |
                                     (static_cast<unsigned char>(value[5]) << 8U))};
    }
  }
  return out;
}

std::string tds_encryption_name(std::uint8_t value) {
  const std::array<const char*, 4> names{"ENCRYPT_OFF", "ENCRYPT_ON", "ENCRYPT_NOT_SUP",
                                         "ENCRYPT_REQ"};
  const auto base = static_cast<std::uint8_t>(value & ~kTdsEncryptClientCert);
  if (base > kTdsEncryptReq) return tds_byte_text(value) + " (unknown)";
  std::string name = names[base];
  if ((value & kTdsEncryptClientCert) != 0) name += " with ENCRYPT_CLIENT_CERT";
  return name + " (" + tds_byte_text(value) + ")";
}

std::string tds_byte_text(std::uint8_t value) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  return std::string("0x") + kDigits[value >> 4U] + kDigits[value & 0x0FU];
}

std::string tds_version_text(const std::array<std::uint16_t, 4>& v) {
  return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]) + "." +
         std::to_string(v[3]);
}

}  // namespace getcert::detail
