#include "net/dial.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "getcert/endpoint.hpp"
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

// getaddrinfo() cannot be cancelled or given a deadline, so it runs on a detached thread that
// shares this state; on timeout the caller leaves and the thread cleans up when DNS returns.
struct Lookup {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  int rc = 0;
  internal::AddrinfoPtr result;
};

Result<internal::AddrinfoPtr> resolve(const std::string& host, std::uint16_t port,
                                      Clock::time_point deadline,
                                      std::chrono::milliseconds budget) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string service = std::to_string(port);

  if (is_ip_literal(host)) {
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo* res = nullptr;
    if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
      return fail(Errc::invalid_argument, "bad address '" + host + "': " + gai_strerror(rc));
    }
    return internal::AddrinfoPtr(res);
  }

  StepTimer timer(Step::resolve, host);
  auto lookup = std::make_shared<Lookup>();
  std::thread([lookup, host, service, hints] {
    addrinfo* res = nullptr;
    const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    const std::lock_guard<std::mutex> lock(lookup->mutex);
    lookup->rc = rc;
    lookup->result.reset(res);
    lookup->done = true;
    lookup->done_cv.notify_all();
  }).detach();

  std::unique_lock<std::mutex> lock(lookup->mutex);
  if (!lookup->done_cv.wait_until(lock, deadline, [&] { return lookup->done; })) {
    return fail(Errc::timeout, "resolving '" + host + "' timed out after " + duration_text(budget));
  }
  if (lookup->rc != 0) {
    const bool unknown = lookup->rc == EAI_NONAME || lookup->rc == EAI_NODATA;
    return fail(Errc::resolve_failed,
                "cannot resolve '" + host +
                    "': " + (unknown ? std::string("no such host") : gai_strerror(lookup->rc)) +
                    " (check the name, or your DNS)");
  }
  std::size_t count = 0;
  for (const addrinfo* ai = lookup->result.get(); ai != nullptr; ai = ai->ai_next) ++count;
  timer.finish(true, std::to_string(count) + (count == 1 ? " address" : " addresses"));
  return std::move(lookup->result);
}

std::string numeric_address(const addrinfo* ai) {
  std::array<char, NI_MAXHOST> buf{};
  if (getnameinfo(ai->ai_addr, ai->ai_addrlen, buf.data(), buf.size(), nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return "?";
  }
  return buf.data();
}

// One attempt; returns 0 on success, else an errno value (ETIMEDOUT when the wait ran out).
int connect_one(const addrinfo* ai, Clock::time_point until, internal::UniqueFd& out) {
  internal::UniqueFd fd(
      ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
  if (fd.get() < 0) return errno;
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
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
                                                 Clock::time_point deadline) {
  const auto budget =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  auto addresses = resolve(host, port, deadline, budget);
  if (!addresses) return tl::unexpected(addresses.error());
  std::vector<std::string> out;
  for (const addrinfo* ai = addresses->get(); ai != nullptr; ai = ai->ai_next) {
    out.push_back(numeric_address(ai));
  }
  return out;
}

Result<Connection> dial_tcp(const std::string& host, std::uint16_t port, Clock::time_point deadline,
                            std::chrono::milliseconds connect_timeout) {
  const auto budget =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  auto addresses = resolve(host, port, deadline, budget);
  if (!addresses) return tl::unexpected(addresses.error());

  const std::string target = Endpoint{host, port, is_ip_literal(host)}.to_string();
  std::string tried;
  bool any_timeout = false;
  for (const addrinfo* ai = addresses->get(); ai != nullptr; ai = ai->ai_next) {
    if (Clock::now() >= deadline) break;
    const auto until = std::min(deadline, Clock::now() + connect_timeout);
    const std::string address = numeric_address(ai);
    StepTimer timer(Step::connect, address + " port " + std::to_string(port));
    internal::UniqueFd fd;
    const int err = connect_one(ai, until, fd);
    timer.finish(err == 0, err == 0 ? std::string() : std::string(std::strerror(err)));
    if (err == 0) return Connection{std::move(fd), address};
    any_timeout = any_timeout || err == ETIMEDOUT;
    tried += (tried.empty() ? "" : ", ") + address + ": " +
             (err == ETIMEDOUT ? "timed out" : std::strerror(err));
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
