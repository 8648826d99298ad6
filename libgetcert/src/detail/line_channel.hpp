#pragma once

// Line-oriented I/O on a connected non-blocking socket with one deadline, for the plain-text
// exchanges before TLS (STARTTLS preambles, proxy CONNECT). Reads one byte at a time so that
// nothing of the TLS handshake that follows is consumed.

#include <string>

#include "detail/dial.hpp"
#include "getcert/error.hpp"

namespace getcert::detail {

class LineChannel {
 public:
  // `peer` names the other side in messages ("SMTP server", "proxy 127.0.0.1:3128");
  // `exchange` what is being done ("the STARTTLS exchange"); `closed_code` is the error code
  // for a peer that hangs up (not_tls for STARTTLS, connect_failed for a proxy).
  LineChannel(int fd, Clock::time_point deadline, std::string peer, std::string exchange,
              Errc closed_code);

  Result<void> send(const std::string& data);
  // One line without its CR LF. Lines over 4 KiB are refused.
  Result<std::string> read_line();
  Result<std::string> read_bytes(std::size_t count);

  const std::string& peer() const noexcept { return peer_; }

 private:
  Result<void> wait(short events);
  Error io_failure() const;
  Error closed() const;

  int fd_;
  Clock::time_point deadline_;
  std::string peer_;
  std::string exchange_;
  Errc closed_code_;
};

}  // namespace getcert::detail
