#pragma once

// SQL Server's TDS (MS-TDS) as far as getcert needs it: the PRELOGIN message that asks for
// encryption (2.2.6.5), the server's PRELOGIN answer, and the TDS packets that carry the TLS
// handshake in TDS 7.x. The message builders and parsers are pure (no I/O), so a server's bytes
// can be tested and fuzzed without a socket; the framing BIO wraps a socket BIO.

#include <openssl/bio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "getcert/error.hpp"

namespace getcert::detail {

// Packet types (2.2.3.1.1).
inline constexpr std::uint8_t kTdsTabularResult = 0x04;  // the server's answer to PRELOGIN
inline constexpr std::uint8_t kTdsPrelogin = 0x12;       // PRELOGIN, and the TLS it carries
inline constexpr std::uint8_t kTdsEndOfMessage = 0x01;   // status bit: last packet of a message
inline constexpr std::size_t kTdsHeaderSize = 8;
// Before LOGIN7 negotiates a size, packets are at most 4096 bytes, header included.
inline constexpr std::size_t kTdsPreloginPacketSize = 4096;

// PRELOGIN ENCRYPTION values (2.2.6.5).
inline constexpr std::uint8_t kTdsEncryptOff = 0x00;
inline constexpr std::uint8_t kTdsEncryptOn = 0x01;
inline constexpr std::uint8_t kTdsEncryptNotSup = 0x02;
inline constexpr std::uint8_t kTdsEncryptReq = 0x03;
inline constexpr std::uint8_t kTdsEncryptClientCert = 0x80;  // flag, with one of the above

// The server's PRELOGIN answer: about 40 bytes in practice (version, encryption, instance,
// thread id, MARS, maybe a nonce); 4 KiB, one packet's worth, bounds what we read.
inline constexpr std::size_t kMaxPreloginAnswer = 4096;

struct TdsHeader {
  std::uint8_t type = 0;
  std::uint8_t status = 0;
  std::size_t length = 0;  // of the whole packet, header included
};
// The 8-byte packet header. Fails with malformed_input when the length is below 8.
Result<TdsHeader> parse_tds_header(std::string_view eight_bytes);

// One packet: header (type, status, length, SPID 0, packet id, window 0) and payload.
std::string tds_packet(std::uint8_t type, std::uint8_t status, std::uint8_t packet_id,
                       std::string_view payload);

// The client's PRELOGIN packet: VERSION, ENCRYPTION (ENCRYPT_ON), INSTOPT (the default
// instance), THREADID, MARS (off), TERMINATOR.
std::string tds_prelogin_request();

struct PreloginAnswer {
  std::optional<std::uint8_t> encryption;
  // VERSION: major, minor, build (big-endian in the message), sub-build.
  std::optional<std::array<std::uint16_t, 4>> version;
};
// Parses a PRELOGIN message's payload: option tokens up to TERMINATOR, then their data. Fails
// with malformed_input on a missing terminator, an option outside the payload, a repeated
// option, or an ENCRYPTION/VERSION of the wrong size.
Result<PreloginAnswer> parse_prelogin(std::string_view payload);

// "ENCRYPT_NOT_SUP (0x02)", "ENCRYPT_ON with ENCRYPT_CLIENT_CERT (0x81)", "0x07 (unknown)".
std::string tds_encryption_name(std::uint8_t value);
// "0x04": a byte of a TDS message, for messages.
std::string tds_byte_text(std::uint8_t value);
// "16.0.1000.6": the SQL Server version as its documentation writes it.
std::string tds_version_text(const std::array<std::uint16_t, 4>& version);

// Pushes a BIO on top of `next` that wraps what TLS writes in PRELOGIN packets (one TDS message
// per flight, flushed when TLS flushes or starts reading) and takes the TDS headers off what it
// reads, whatever the split of records across packets and packets across reads. Returns the new
// top of the chain, or nullptr (then `next` is untouched and still the caller's).
BIO* push_tds_framing(BIO* next);
// Ends the framing: what TLS has written is sent as a last PRELOGIN message, and from then on
// bytes pass through bare, as they do once a TDS 7.x handshake is over.
void end_tds_framing(BIO* framing);
// Why the framing stopped reading ("sent a TDS packet of type 0x04 during the TLS handshake"),
// or "" when it did not.
std::string tds_framing_failure(BIO* framing);

}  // namespace getcert::detail
