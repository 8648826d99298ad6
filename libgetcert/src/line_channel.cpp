#include "detail/line_channel.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace getcert::detail {

Result<std::size_t> LineAssembler::take(std::string_view bytes) {
  if (complete_) return 0;
  const auto lf = bytes.find('\n');
  const std::size_t took = lf == std::string_view::npos ? bytes.size() : lf + 1;
  const std::string_view text = bytes.substr(0, lf == std::string_view::npos ? took : lf);
  if (line_.size() + text.size() > kMaxReplyLine) {
    return fail(Errc::limit_exceeded,
                "sent a line longer than " + std::to_string(kMaxReplyLine / 1024) + " KiB");
  }
  line_.append(text);
  complete_ = lf != std::string_view::npos;
  return took;
}

std::string LineAssembler::pop() {
  std::string out = std::move(line_);
  line_.clear();
  complete_ = false;
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

LineChannel::LineChannel(int fd, Clock::time_point deadline, std::string peer, std::string exchange,
                         Errc closed_code)
    : fd_(fd),
      deadline_(deadline),
      peer_(std::move(peer)),
      exchange_(std::move(exchange)),
      closed_code_(closed_code) {}

Result<void> LineChannel::send(const std::string& data) {
  switch (send_until(fd_, data, deadline_)) {
    case SendOutcome::sent:
      return {};
    case SendOutcome::timed_out:
      return tl::unexpected(timed_out());
    case SendOutcome::failed:
      break;
  }
  return tl::unexpected(io_failure());
}

Result<std::string> LineChannel::read_line() {
  // Peek, then consume exactly the bytes up to the LF: everything before it is this line's,
  // everything after it may be the server's first TLS record.
  LineAssembler line;
  std::array<char, 1024> buf{};
  while (!line.complete()) {
    if (Clock::now() >= deadline_) return tl::unexpected(timed_out());
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_PEEK);
    if (n > 0) {
      auto took = line.take(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      if (!took) return tl::unexpected(peer_fault(took.error()));
      const ssize_t consumed = ::recv(fd_, buf.data(), *took, 0);
      if (consumed != static_cast<ssize_t>(*took)) return tl::unexpected(io_failure());
      continue;
    }
    if (n == 0) return tl::unexpected(closed());
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return tl::unexpected(io_failure());
    if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
  }
  return line.pop();
}

Result<void> LineChannel::read_into(
    const std::function<Result<std::size_t>(std::string_view)>& take,
    const std::function<bool()>& complete) {
  std::array<char, 1024> buf{};
  while (!complete()) {
    if (Clock::now() >= deadline_) return tl::unexpected(timed_out());
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_PEEK);
    if (n > 0) {
      auto took = take(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      if (!took && took.error().code == Errc::not_tls) {
        return fail(Errc::not_tls, peer_ + " " + took.error().message);
      }
      if (!took) return tl::unexpected(peer_fault(took.error()));
      if (*took == 0) {
        if (complete()) break;
        return fail(Errc::internal, "a reader of " + exchange_ + " stalled on its input");
      }
      const ssize_t consumed = ::recv(fd_, buf.data(), *took, 0);
      if (consumed != static_cast<ssize_t>(*took)) return tl::unexpected(io_failure());
      continue;
    }
    if (n == 0) return tl::unexpected(closed());
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return tl::unexpected(io_failure());
    if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
  }
  return {};
}

Result<std::string> LineChannel::read_bytes(std::size_t count) {
  std::string out;
  std::array<char, 256> buf{};
  while (out.size() < count) {
    if (Clock::now() >= deadline_) return tl::unexpected(timed_out());
    const ssize_t n = ::recv(fd_, buf.data(), std::min(buf.size(), count - out.size()), 0);
    if (n > 0) {
      out.append(buf.data(), static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return tl::unexpected(closed());
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return tl::unexpected(io_failure());
    if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
  }
  return out;
}

Error LineChannel::peer_fault(const Error& what) const {
  return {Errc::connect_failed, peer_ + " " + what.message + " during " + exchange_};
}

Result<void> LineChannel::wait(short events) {
  const int rc = poll_until(fd_, events, deadline_);
  if (rc == 0) return tl::unexpected(timed_out());
  if (rc < 0) return tl::unexpected(io_failure());
  return {};
}

Error LineChannel::timed_out() const {
  return {Errc::timeout, peer_ + " did not answer " + exchange_ + " in time (--timeout)"};
}

// A reset or similar: the network failed, not a local file.
Error LineChannel::io_failure() const {
  return {Errc::connect_failed, exchange_ + " with " + peer_ + " failed: " + std::strerror(errno)};
}

Error LineChannel::closed() const {
  return {closed_code_, peer_ + " closed the connection during " + exchange_};
}

}  // namespace getcert::detail
