// SQL Server (MS-TDS 7.x): PRELOGIN asking for encryption, the server's PRELOGIN answer with its
// encryption setting; the TLS handshake that follows travels in PRELOGIN packets
// (handshake_transport() in starttls.cpp, tds_bio.cpp).

#include "internal/try.hpp"
#include "net/line_channel.hpp"
#include "net/replies.hpp"
#include "starttls/starttls_protocols.hpp"
#include "starttls/tds.hpp"

namespace getcert::detail {

Result<void> mssql_preamble(LineChannel& ch) {
  if (auto ok = ch.send(tds_prelogin_request()); !ok) return ok;
  std::string message;
  for (bool first = true;; first = false) {
    GETCERT_TRY_ASSIGN(auto head, ch.read_bytes(kTdsHeaderSize));
    auto header = parse_tds_header(head);
    if (first && (!header || header->type != kTdsTabularResult)) {
      // Not TDS at all (an HTTP error page, a TLS alert...): show what it was.
      return tl::unexpected(Error{Errc::not_tls, ch.peer() + " did not answer PRELOGIN with a " +
                                                     "TDS reply (it sent " +
                                                     quote_untrusted(head, kPeerQuoteMax) + ")"});
    }
    if (!header) return tl::unexpected(ch.peer_fault(header.error()));
    if (header->type != kTdsTabularResult) {
      return tl::unexpected(ch.peer_fault(
          {Errc::malformed_input, "sent a TDS packet of another type inside its PRELOGIN answer"}));
    }
    const std::size_t size = header->length - kTdsHeaderSize;
    if (size > kMaxPreloginAnswer - message.size()) {
      return tl::unexpected(ch.peer_fault(
          {Errc::limit_exceeded,
           "sent a PRELOGIN answer over " + std::to_string(kMaxPreloginAnswer / 1024) + " KiB"}));
    }
    GETCERT_TRY_ASSIGN(auto payload, ch.read_bytes(size));
    message += payload;
    if ((header->status & kTdsEndOfMessage) != 0) break;
  }
  auto answer = parse_prelogin(message);
  if (!answer) return tl::unexpected(ch.peer_fault(answer.error()));
  const std::string who =
      ch.peer() + (answer->version ? " " + tds_version_text(*answer->version) : std::string());
  if (!answer->encryption) {
    return tl::unexpected(Error{Errc::not_tls, who + " stated no encryption setting in its " +
                                                   "PRELOGIN answer, so it offers no TLS"});
  }
  // Whatever else it answers, a server that is not ENCRYPT_NOT_SUP goes on to the handshake
  // when the client asked for ENCRYPT_ON (2.2.6.5).
  if ((*answer->encryption & ~kTdsEncryptClientCert) == kTdsEncryptNotSup) {
    return tl::unexpected(Error{Errc::not_tls, who + " does not support encryption: its " +
                                                   "encryption setting is " +
                                                   tds_encryption_name(*answer->encryption)});
  }
  return {};
}

}  // namespace getcert::detail
