#include "detail/line_channel.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace getcert::detail {

LineChannel::LineChannel(int fd, Clock::time_point deadline, std::string peer, std::string exchange,
                         Errc closed_code)
    : fd_(fd),
      deadline_(deadline),
      peer_(std::move(peer)),
      exchange_(std::move(exchange)),
      closed_code_(closed_code) {}

Result<void> LineChannel::send(const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return tl::unexpected(io_failure());
    if (auto ok = wait(POLLOUT); !ok) return ok;
  }
  return {};
}

Result<std::string> LineChannel::read_line() {
  std::string line;
  for (;;) {
    char c = 0;
    const ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n == 1) {
      if (c == '\n') break;
      if (c != '\r') line.push_back(c);
      if (line.size() > 4096) return fail(closed_code_, peer_ + " sent an overlong line");
      continue;
    }
    if (n == 0) return tl::unexpected(closed());
    if (errno != EAGAIN && errno != EINTR) return tl::unexpected(io_failure());
    if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
  }
  return line;
}

Result<std::string> LineChannel::read_bytes(std::size_t count) {
  std::string out;
  while (out.size() < count) {
    char c = 0;
    const ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n == 1) {
      out.push_back(c);
      continue;
    }
    if (n == 0) return tl::unexpected(closed());
    if (errno != EAGAIN && errno != EINTR) return tl::unexpected(io_failure());
    if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
  }
  return out;
}

Result<void> LineChannel::wait(short events) {
  pollfd pfd{fd_, events, 0};
  int rc = 0;
  do {
    rc = ::poll(&pfd, 1, millis_until(deadline_));
  } while (rc < 0 && errno == EINTR);
  if (rc == 0) return fail(Errc::timeout, peer_ + " did not answer " + exchange_ + " in time");
  if (rc < 0) return tl::unexpected(io_failure());
  return {};
}

Error LineChannel::io_failure() const {
  return {Errc::io_error, exchange_ + " with " + peer_ + " failed: " + std::strerror(errno)};
}

Error LineChannel::closed() const {
  return {closed_code_, peer_ + " closed the connection during " + exchange_};
}

}  // namespace getcert::detail
