#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "detail/starttls.hpp"

namespace getcert::detail {
namespace {

// Line-oriented I/O on a non-blocking socket with one deadline. Reads one byte at a time so
// nothing of the TLS handshake that follows is consumed.
class LineChannel {
 public:
  LineChannel(int fd, Clock::time_point deadline, std::string protocol)
      : fd_(fd), deadline_(deadline), protocol_(std::move(protocol)) {}

  Result<void> send(const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) return io_failure();
      if (auto ok = wait(POLLOUT); !ok) return ok;
    }
    return {};
  }

  Result<std::string> read_line() {
    std::string line;
    for (;;) {
      char c = 0;
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n == 1) {
        if (c == '\n') break;
        if (c != '\r') line.push_back(c);
        if (line.size() > 4096)
          return fail(Errc::not_tls, protocol_ + " server sent an overlong line");
        continue;
      }
      if (n == 0) {
        return fail(Errc::not_tls, protocol_ + " server closed the connection before STARTTLS");
      }
      if (errno != EAGAIN && errno != EINTR) return tl::unexpected(io_failure().error());
      if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
    }
    return line;
  }

  Result<std::string> read_bytes(std::size_t count) {
    std::string out;
    while (out.size() < count) {
      char c = 0;
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n == 1) {
        out.push_back(c);
        continue;
      }
      if (n == 0) return fail(Errc::not_tls, protocol_ + " server closed the connection");
      if (errno != EAGAIN && errno != EINTR) return tl::unexpected(io_failure().error());
      if (auto ok = wait(POLLIN); !ok) return tl::unexpected(ok.error());
    }
    return out;
  }

  Error refused(const std::string& answer) const {
    return {Errc::not_tls, protocol_ + " server did not accept the switch to TLS (it answered \"" +
                               answer.substr(0, 80) + "\")"};
  }

 private:
  Result<void> wait(short events) {
    pollfd pfd{fd_, events, 0};
    int rc = 0;
    do {
      rc = ::poll(&pfd, 1, millis_until(deadline_));
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      return fail(Errc::timeout,
                  protocol_ + " server did not answer the STARTTLS exchange in time");
    }
    if (rc < 0) return io_failure();
    return {};
  }

  Result<void> io_failure() const {
    return fail(Errc::io_error, protocol_ + " exchange failed: " + std::strerror(errno));
  }

  int fd_;
  Clock::time_point deadline_;
  std::string protocol_;
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// SMTP replies may span lines: "250-..." continues, "250 ..." ends.
Result<std::string> smtp_reply(LineChannel& ch) {
  for (;;) {
    auto line = ch.read_line();
    if (!line) return line;
    if (line->size() < 4 || (*line)[3] != '-') return line;
  }
}

Result<void> smtp(LineChannel& ch) {
  auto greeting = smtp_reply(ch);
  if (!greeting) return tl::unexpected(greeting.error());
  if (!starts_with(*greeting, "220")) return tl::unexpected(ch.refused(*greeting));
  if (auto ok = ch.send("EHLO getcert\r\n"); !ok) return ok;
  auto ehlo = smtp_reply(ch);
  if (!ehlo) return tl::unexpected(ehlo.error());
  if (!starts_with(*ehlo, "250")) return tl::unexpected(ch.refused(*ehlo));
  if (auto ok = ch.send("STARTTLS\r\n"); !ok) return ok;
  auto go = smtp_reply(ch);
  if (!go) return tl::unexpected(go.error());
  if (!starts_with(*go, "220")) return tl::unexpected(ch.refused(*go));
  return {};
}

Result<void> imap(LineChannel& ch) {
  auto greeting = ch.read_line();
  if (!greeting) return tl::unexpected(greeting.error());
  if (!starts_with(*greeting, "* OK")) return tl::unexpected(ch.refused(*greeting));
  if (auto ok = ch.send("g1 STARTTLS\r\n"); !ok) return ok;
  for (;;) {  // untagged lines may come first
    auto line = ch.read_line();
    if (!line) return tl::unexpected(line.error());
    if (starts_with(*line, "g1 OK")) return {};
    if (starts_with(*line, "g1 ")) return tl::unexpected(ch.refused(*line));
  }
}

Result<void> pop3(LineChannel& ch) {
  auto greeting = ch.read_line();
  if (!greeting) return tl::unexpected(greeting.error());
  if (!starts_with(*greeting, "+OK")) return tl::unexpected(ch.refused(*greeting));
  if (auto ok = ch.send("STLS\r\n"); !ok) return ok;
  auto go = ch.read_line();
  if (!go) return tl::unexpected(go.error());
  if (!starts_with(*go, "+OK")) return tl::unexpected(ch.refused(*go));
  return {};
}

Result<void> ftp(LineChannel& ch) {
  auto greeting = smtp_reply(ch);  // FTP uses the same multi-line reply syntax
  if (!greeting) return tl::unexpected(greeting.error());
  if (!starts_with(*greeting, "220")) return tl::unexpected(ch.refused(*greeting));
  if (auto ok = ch.send("AUTH TLS\r\n"); !ok) return ok;
  auto go = smtp_reply(ch);
  if (!go) return tl::unexpected(go.error());
  if (!starts_with(*go, "234")) return tl::unexpected(ch.refused(*go));
  return {};
}

Result<void> postgres(LineChannel& ch) {
  // SSLRequest: length 8, code 80877103; the server answers one byte, 'S' to proceed.
  static constexpr std::array<char, 8> kSslRequest{0,    0,   0, 8, 0x04, static_cast<char>(0xd2),
                                                   0x16, 0x2f};
  if (auto ok = ch.send(std::string(kSslRequest.data(), kSslRequest.size())); !ok) return ok;
  auto answer = ch.read_bytes(1);
  if (!answer) return tl::unexpected(answer.error());
  if (*answer != "S")
    return tl::unexpected(ch.refused(*answer == "N" ? "N: SSL not enabled" : *answer));
  return {};
}

}  // namespace

Result<void> negotiate_starttls(StartTls protocol, int fd, const std::string& /*host*/,
                                Clock::time_point deadline) {
  switch (protocol) {
    case StartTls::none:
      return {};
    case StartTls::smtp: {
      LineChannel ch(fd, deadline, "SMTP");
      return smtp(ch);
    }
    case StartTls::imap: {
      LineChannel ch(fd, deadline, "IMAP");
      return imap(ch);
    }
    case StartTls::pop3: {
      LineChannel ch(fd, deadline, "POP3");
      return pop3(ch);
    }
    case StartTls::ftp: {
      LineChannel ch(fd, deadline, "FTP");
      return ftp(ch);
    }
    case StartTls::postgres: {
      LineChannel ch(fd, deadline, "PostgreSQL");
      return postgres(ch);
    }
  }
  return {};
}

}  // namespace getcert::detail
