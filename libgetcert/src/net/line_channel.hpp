#pragma once

// Line-oriented I/O on a connected non-blocking socket with one deadline, for the plain-text
// exchanges before TLS (STARTTLS preambles, proxy CONNECT). Never consumes a byte past the
// line it returns: the TLS handshake that follows must find its first byte in the socket.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "getcert/error.hpp"
#include "internal/try.hpp"
#include "net/dial.hpp"

namespace getcert::detail {

// One line from a plain-text peer. SMTP allows 512 bytes, IMAP capability lines run to about
// 1 KiB; 4 KiB fits every real server and bounds what a hostile one makes us hold.
inline constexpr std::size_t kMaxReplyLine = 4096;

// Collects one LF-terminated line from bytes however they arrive. Pure: no I/O.
class LineAssembler {
 public:
  // Takes bytes up to and including the first LF and returns how many it took (the rest
  // belongs to what follows the line). Fails with limit_exceeded past kMaxReplyLine.
  Result<std::size_t> take(std::string_view bytes);
  bool complete() const noexcept { return complete_; }
  // The completed line without its CR LF; starts the next one.
  std::string pop();

 private:
  std::string line_;
  bool complete_ = false;
};

class LineChannel {
 public:
  // `peer` names the other side in messages ("SMTP server", "proxy 127.0.0.1:3128");
  // `exchange` what is being done ("the STARTTLS exchange"); `closed_code` is the error code
  // for a peer that hangs up (not_tls for STARTTLS, connect_failed for a proxy).
  LineChannel(int fd, Clock::time_point deadline, std::string peer, std::string exchange,
              Errc closed_code);

  Result<void> send(const std::string& data);
  // One line without its CR LF. Lines over kMaxReplyLine are refused (connect_failed).
  Result<std::string> read_line();
  Result<std::string> read_bytes(std::size_t count);
  // Offers what has arrived to `take`, which returns how many bytes it used (at most those it
  // was given; a failure ends the read, blamed on the peer: not_tls as it is, for a peer that
  // speaks another protocol, anything else as peer_fault()), and consumes exactly those, until
  // `complete()`: for framings other than lines (XML elements), with the same guarantee that
  // nothing past the end is consumed.
  Result<void> read_into(const std::function<Result<std::size_t>(std::string_view)>& take,
                         const std::function<bool()>& complete);

  const std::string& peer() const noexcept { return peer_; }
  // A broken rule of the exchange (too many lines...), blamed on the peer: connect_failed, so
  // the user sees a network-class failure naming who misbehaved.
  Error peer_fault(const Error& what) const;

 private:
  // Bytes that arrived before the deadline (recv_some_until), 0 when the peer closed.
  Result<std::size_t> receive(char* buf, std::size_t len, int flags);
  Error timed_out() const;
  Error io_failure() const;
  Error closed() const;

  int fd_;
  Clock::time_point deadline_;
  std::string peer_;
  std::string exchange_;
  Errc closed_code_;
};

// Reads lines into `reply` until it is complete: Reply::add(line) says whether it is, or fails
// for a reply that breaks its protocol's rules (blamed on the peer, as peer_fault()).
// MultilineReply, TaggedReply, ProxyReply, NntpCapabilities.
template <class Reply>
Result<void> read_reply(LineChannel& ch, Reply& reply) {
  for (;;) {
    GETCERT_TRY_ASSIGN(auto line, ch.read_line());
    auto complete = reply.add(std::move(line));
    if (!complete) return tl::unexpected(ch.peer_fault(complete.error()));
    if (*complete) return {};
  }
}

}  // namespace getcert::detail
