#include "net/dial.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "getcert/endpoint.hpp"
#include "internal/try.hpp"
#include "net/resolver.hpp"
#include "net/timings.hpp"

namespace getcert::detail {

int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(
      std::clamp<std::int64_t>(left.count(), 0, std::int64_t{24} * 3600 * 1000));
}

int poll_until(int fd, short events, Clock::time_point deadline) {
  pollfd pfd{fd, events, 0};
  int rc = 0;
  do {
    rc = ::poll(&pfd, 1, millis_until(deadline));
  } while (rc < 0 && errno == EINTR);
  return rc;
}

SendOutcome send_until(int fd, std::string_view data, Clock::time_point deadline) {
  std::size_t off = 0;
  while (off < data.size()) {
    if (Clock::now() >= deadline) return SendOutcome::timed_out;
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return SendOutcome::failed;
    const int rc = poll_until(fd, POLLOUT, deadline);
    if (rc == 0) return SendOutcome::timed_out;
    if (rc < 0) return SendOutcome::failed;
  }
  return SendOutcome::sent;
}

RecvOutcome recv_until(int fd, char* buf, std::size_t len, int flags, Clock::time_point deadline,
                       std::size_t& got) {
  for (;;) {
    if (Clock::now() >= deadline) return RecvOutcome::timed_out;
    const ssize_t n = ::recv(fd, buf, len, flags);
    if (n > 0) {
      got = static_cast<std::size_t>(n);
      return RecvOutcome::received;
    }
    if (n == 0) return RecvOutcome::closed;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return RecvOutcome::failed;
    const int rc = poll_until(fd, POLLIN, deadline);
    if (rc == 0) return RecvOutcome::timed_out;
    if (rc < 0) return RecvOutcome::failed;
  }
}

Clock::time_point share_of(Clock::time_point deadline, std::size_t parts) {
  const auto now = Clock::now();
  if (now >= deadline) return deadline;
  const auto left = deadline - now;
  const auto even = left / static_cast<std::int64_t>(std::max<std::size_t>(parts, 1));
  return now + std::max<Clock::duration>(even, std::min<Clock::duration>(left, kMinShare));
}

std::string duration_text(std::chrono::milliseconds ms) {
  const auto count = ms.count();
  if (count % 1000 == 0) return std::to_string(count / 1000) + " s";
  return std::to_string(count) + " ms";
}

namespace {

// The lookup, timed as a step; IP literals are parsed, not looked up, so they are not a step.
Result<std::vector<ResolvedAddress>> resolve(const std::string& host, std::uint16_t port,
                                             Clock::time_point deadline,
                                             const std::optional<DnsServer>& resolver) {
  if (is_ip_literal(host)) return resolve_host(host, port, resolver, deadline);
  StepTimer timer(Step::resolve, host);
  auto addresses = resolve_host(host, port, resolver, deadline);
  if (!addresses) return addresses;
  const std::size_t count = addresses->size();
  timer.finish(true, std::to_string(count) + (count == 1 ? " address" : " addresses"));
  return addresses;
}

// One attempt; returns 0 on success, else an errno value (ETIMEDOUT when the wait ran out).
int connect_one(const ResolvedAddress& to, Clock::time_point until, internal::UniqueFd& out) {
  internal::UniqueFd fd(::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return errno;
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to.storage), to.length) != 0) {
    if (errno != EINPROGRESS) return errno;
    const int rc = poll_until(fd.get(), POLLOUT, until);
    if (rc == 0) return ETIMEDOUT;
    if (rc < 0) return errno;
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) return errno;
    if (so_error != 0) return so_error;
  }
  out = std::move(fd);
  return 0;
}

}  // namespace

Result<std::vector<std::string>> resolve_numeric(const std::string& host, std::uint16_t port,
                                                 Clock::time_point deadline,
                                                 const std::optional<DnsServer>& resolver) {
  GETCERT_TRY_ASSIGN(auto addresses, resolve(host, port, deadline, resolver));
  std::vector<std::string> out;
  out.reserve(addresses.size());
  for (const auto& address : addresses) out.push_back(numeric_text(address));
  return out;
}

Result<Connection> dial_tcp(const std::string& host, std::uint16_t port, Clock::time_point deadline,
                            std::chrono::milliseconds connect_timeout,
                            const std::optional<DnsServer>& resolver) {
  const auto budget =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  GETCERT_TRY_ASSIGN(auto addresses, resolve(host, port, deadline, resolver));

  const std::string target = Endpoint{host, port, is_ip_literal(host)}.to_string();
  // What each address answered, for the message: the first few in full, then a count (a name
  // with a thousand A records must not make a 32 KB error line).
  constexpr std::size_t kListed = 3;
  std::string tried;
  std::size_t failed = 0;
  bool any_timeout = false;
  for (const auto& to : addresses) {
    if (Clock::now() >= deadline) break;
    const auto until = std::min(deadline, Clock::now() + connect_timeout);
    const std::string address = numeric_text(to);
    StepTimer timer(Step::connect, address + " port " + std::to_string(port));
    internal::UniqueFd fd;
    const int err = connect_one(to, until, fd);
    timer.finish(err == 0, err == 0 ? std::string() : std::string(std::strerror(err)));
    if (err == 0) return Connection{std::move(fd), address};
    any_timeout = any_timeout || err == ETIMEDOUT;
    if (++failed <= kListed) {
      tried += (tried.empty() ? "" : ", ") + address + ": " +
               (err == ETIMEDOUT ? "timed out" : std::strerror(err));
    }
  }
  if (failed > kListed) {
    tried += ", and " + std::to_string(failed - kListed) + " more address" +
             (failed - kListed == 1 ? "" : "es");
  }
  if (Clock::now() >= deadline) {
    return fail(Errc::timeout, "connecting to " + target + " timed out after " +
                                   duration_text(budget) +
                                   (tried.empty() ? "" : " (" + tried + ")"));
  }
  if (any_timeout) {
    return fail(Errc::timeout, "connecting to " + target + " timed out (" + tried +
                                   "); is a firewall dropping packets?");
  }
  return fail(Errc::connect_failed, "cannot connect to " + target + " (" + tried +
                                        "); is the server running on that port?");
}

}  // namespace getcert::detail
