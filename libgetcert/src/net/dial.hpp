#pragma once

// TCP dialing with deadlines: resolve every address (net/resolver.hpp), try each in turn.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "getcert/error.hpp"
#include "internal/owners.hpp"
#include "net/resolver.hpp"

namespace getcert::detail {

using Clock = std::chrono::steady_clock;

struct Connection {
  internal::UniqueFd fd;  // non-blocking, connected
  std::string address;    // numeric address that accepted
};

// Milliseconds left until deadline (0 when passed), capped to fit poll().
int millis_until(Clock::time_point deadline);

// poll() on one fd until it is ready for `events` or the deadline passes, retrying EINTR:
// > 0 ready, 0 deadline passed, < 0 failed (errno set).
int poll_until(int fd, short events, Clock::time_point deadline);

// How send_until() ended: everything sent, the deadline passed, or the socket failed (errno
// set, for the caller's message).
enum class SendOutcome { sent, timed_out, failed };
// Sends all of `data` on a non-blocking socket, waiting (poll_until) whenever it is full; the
// deadline is checked before every send, so a peer that stops reading cannot hold us past it.
SendOutcome send_until(int fd, std::string_view data, Clock::time_point deadline);

// How recv_until() ended: bytes arrived, the peer closed, the deadline passed, or the socket
// failed (errno set, for the caller's message).
enum class RecvOutcome { received, closed, timed_out, failed };
// One recv() of up to `len` bytes on a non-blocking socket, retrying EINTR and waiting
// (poll_until) while nothing has arrived; the deadline is checked before every recv, so a peer
// that keeps sending cannot outlive it. On `received`, `got` (> 0) says how many bytes came.
RecvOutcome recv_until(int fd, char* buf, std::size_t len, int flags, Clock::time_point deadline,
                       std::size_t& got);

// send_until() and recv_until() as Results, for exchanges that name their own errors:
// `timed_out()` and `failed()` build them, called at once so `failed` still sees errno.
template <class TimedOut, class Failed>
Result<void> send_all_until(int fd, std::string_view data, Clock::time_point deadline,
                            const TimedOut& timed_out, const Failed& failed) {
  switch (send_until(fd, data, deadline)) {
    case SendOutcome::sent:
      return {};
    case SendOutcome::timed_out:
      return tl::unexpected(timed_out());
    case SendOutcome::failed:
      break;
  }
  return tl::unexpected(failed());
}
// How many bytes arrived; 0 when the peer closed.
template <class TimedOut, class Failed>
Result<std::size_t> recv_some_until(int fd, char* buf, std::size_t len, int flags,
                                    Clock::time_point deadline, const TimedOut& timed_out,
                                    const Failed& failed) {
  std::size_t got = 0;
  switch (recv_until(fd, buf, len, flags, deadline, got)) {
    case RecvOutcome::received:
      return got;
    case RecvOutcome::closed:
      return 0;
    case RecvOutcome::timed_out:
      return tl::unexpected(timed_out());
    case RecvOutcome::failed:
      break;
  }
  return tl::unexpected(failed());
}

// A request that hangs can spend no more than its share: a slice of what is left until
// `deadline`, split evenly among the `parts` requests still planned (this one included), but at
// least kMinShare when that much is left, so a slow first source still has a fair try.
inline constexpr std::chrono::milliseconds kMinShare{1000};
Clock::time_point share_of(Clock::time_point deadline, std::size_t parts);

// "2 s", "1500 ms": a budget as messages show it.
std::string duration_text(std::chrono::milliseconds ms);

// The numeric addresses host resolves to (itself for an IP literal), in the resolver's order,
// asking `resolver` when given (else the system's configuration; see resolve_host()).
// Errors: resolve_failed, timeout, invalid_argument.
Result<std::vector<std::string>> resolve_numeric(const std::string& host, std::uint16_t port,
                                                 Clock::time_point deadline,
                                                 const std::optional<DnsServer>& resolver = {});

// Resolves host (skipping DNS for IP literals) and connects to each address in turn, v6 and v4
// as the resolver orders them, each attempt bounded by connect_timeout and the deadline.
Result<Connection> dial_tcp(const std::string& host, std::uint16_t port, Clock::time_point deadline,
                            std::chrono::milliseconds connect_timeout,
                            const std::optional<DnsServer>& resolver = {});

}  // namespace getcert::detail
