#include "net/line_channel.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "internal/try.hpp"

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
  return send_all_until(
      fd_, data, deadline_, [this] { return timed_out(); }, [this] { return io_failure(); });
}

Result<std::string> LineChannel::read_line() {
  LineAssembler line;
  auto ok = read_into([&line](std::string_view bytes) { return line.take(bytes); },
                      [&line] { return line.complete(); });
  if (!ok) return tl::unexpected(ok.error());
  return line.pop();
}

Result<void> LineChannel::read_into(
    const std::function<Result<std::size_t>(std::string_view)>& take,
    const std::function<bool()>& complete) {
  // Peek, then consume exactly the bytes `take` used: everything after them may be the
  // server's first TLS record.
  std::array<char, 1024> buf{};
  while (!complete()) {
    GETCERT_TRY_ASSIGN(auto n, receive(buf.data(), buf.size(), MSG_PEEK));
    if (n == 0) return tl::unexpected(closed());
    auto took = take(std::string_view(buf.data(), n));
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
  }
  return {};
}

Result<std::string> LineChannel::read_bytes(std::size_t count) {
  std::string out;
  std::array<char, 256> buf{};
  while (out.size() < count) {
    GETCERT_TRY_ASSIGN(auto n, receive(buf.data(), std::min(buf.size(), count - out.size()), 0));
    if (n == 0) return tl::unexpected(closed());
    out.append(buf.data(), n);
  }
  return out;
}

Error LineChannel::peer_fault(const Error& what) const {
  return {Errc::connect_failed, peer_ + " " + what.message + " during " + exchange_};
}

Result<std::size_t> LineChannel::receive(char* buf, std::size_t len, int flags) {
  return recv_some_until(
      fd_, buf, len, flags, deadline_, [this] { return timed_out(); },
      [this] { return io_failure(); });
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
