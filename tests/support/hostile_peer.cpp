#include "support/hostile_peer.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace getcert::test {

HostilePeer::HostilePeer(Behavior behavior) : behavior_(behavior), listener_("HostilePeer", 0) {
  listener_.start([this](int fd) {
    note_accepted();
    handle(fd);
  });
}

HostilePeer::HostilePeer(Script script, std::uint16_t port)
    : script_(std::move(script)), listener_("HostilePeer", port) {
  for (const Step& step : script_) {
    const bool repeats = step.kind == Step::Kind::flood || step.kind == Step::Kind::drip;
    if (repeats && step.bytes.empty()) {
      throw std::logic_error("HostilePeer: a flood or drip step needs bytes to repeat");
    }
  }
  listener_.start([this](int fd) {
    note_accepted();
    handle(fd);
  });
}

HostilePeer::~HostilePeer() { listener_.stop(); }

void HostilePeer::note_accepted() {
  const auto now = std::chrono::steady_clock::now();
  ++connections_;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!first_accepted_) first_accepted_ = now;
}

std::optional<std::chrono::steady_clock::time_point> HostilePeer::first_accepted() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return first_accepted_;
}

int HostilePeer::connections_settled() { return listener_.connections_settled(); }

std::vector<std::string> HostilePeer::client_hellos() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return hellos_;
}

std::string HostilePeer::read_hello(int fd) {
  std::string bytes;
  char buf[4096];
  while (bytes.size() < sizeof buf) {
    if (bytes.size() >= 5 && static_cast<unsigned char>(bytes[0]) == 0x16) {
      const std::size_t record =
          5 + (static_cast<std::size_t>(static_cast<unsigned char>(bytes[3])) << 8) +
          static_cast<unsigned char>(bytes[4]);
      if (bytes.size() >= record) break;
    } else if (bytes.size() >= 5) {
      break;  // not TLS: whatever arrived is enough
    }
    if (!wait_readable(fd, 5000)) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf - bytes.size(), 0);
    if (n <= 0) break;
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  hellos_.push_back(bytes);
  return bytes;
}

bool HostilePeer::send_all(int fd, std::string_view data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;  // the client went away
    // A client that stopped reading: wait for room, or for the destructor.
    pollfd fds[2] = {{fd, POLLOUT, 0}, {listener_.wake_fd(), POLLIN, 0}};
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) return false;
    if ((fds[1].revents & POLLIN) != 0) return false;
  }
  return true;
}

bool HostilePeer::play(int fd) {
  using Kind = Step::Kind;
  // Sleeps `ms` unless told to stop; false when stopping.
  auto pause = [this](std::chrono::milliseconds ms) {
    if (ms.count() == 0) return true;
    pollfd wake{listener_.wake_fd(), POLLIN, 0};
    return ::poll(&wake, 1, static_cast<int>(ms.count())) == 0;
  };
  for (const Step& step : script_) {
    switch (step.kind) {
      case Kind::read_until: {
        std::string got;
        char buf[4096];
        while (got.find(step.bytes) == std::string::npos && got.size() < 65536) {
          if (!wait_readable(fd, 5000)) return true;
          const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
          if (n <= 0) return true;
          got.append(buf, static_cast<std::size_t>(n));
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        hellos_.push_back(got);
        break;
      }
      case Kind::send:
        if (!pause(step.delay) || !send_all(fd, step.bytes)) return true;
        break;
      case Kind::send_bytewise:
        for (const char c : step.bytes) {
          if (!pause(step.delay) || !send_all(fd, std::string_view(&c, 1))) return true;
        }
        break;
      case Kind::flood:
        while (send_all(fd, step.bytes)) {
        }
        return true;
      case Kind::drip:
        for (std::size_t i = 0;; i = (i + 1) % step.bytes.size()) {
          if (!pause(step.delay) || !send_all(fd, std::string_view(&step.bytes[i], 1))) {
            return true;
          }
        }
      case Kind::hold: {
        listener_.hold(fd);
        return false;
      }
    }
  }
  return true;
}

void HostilePeer::handle(int fd) {
  {
    const int one = 1;  // byte-wise writes must reach the client as separate segments
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  // Drains what the client sends until it closes (bounded), so our close() sends a FIN
  // rather than a reset that could destroy the answer before the client reads it.
  auto linger_until_client_closes = [this, fd] {
    char buf[1024];
    while (wait_readable(fd, 5000) && ::recv(fd, buf, sizeof buf, 0) > 0) {
    }
  };
  auto send_all = [this, fd](const std::string& data) { (void)this->send_all(fd, data); };
  if (!script_.empty()) {
    if (!play(fd)) return;  // held open
    ::shutdown(fd, SHUT_WR);
    linger_until_client_closes();
    ::close(fd);
    return;
  }
  switch (behavior_) {
    case Behavior::silent: {
      (void)read_hello(fd);
      listener_.hold(fd);
      return;
    }
    case Behavior::plain_http:
      (void)read_hello(fd);
      send_all(
          "HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Type: text/html\r\n"
          "Content-Length: 0\r\nConnection: close\r\n\r\n");
      ::shutdown(fd, SHUT_WR);
      linger_until_client_closes();
      break;
    case Behavior::close_after_hello:
      (void)read_hello(fd);
      break;
    case Behavior::garbage:
      (void)read_hello(fd);
      send_all(std::string("\x00\x7f\xff garbage \x01\x02\x03 not a TLS record at all\n", 40));
      ::shutdown(fd, SHUT_WR);
      linger_until_client_closes();
      break;
  }
  ::close(fd);
}

std::optional<std::string> sni_of_client_hello(const std::string& hello) {
  const auto* p = reinterpret_cast<const unsigned char*>(hello.data());
  const std::size_t n = hello.size();
  auto need = [n](std::size_t pos, std::size_t len) {
    if (pos + len > n) throw std::runtime_error("truncated ClientHello");
  };
  auto u16 = [p](std::size_t pos) { return static_cast<std::size_t>((p[pos] << 8) | p[pos + 1]); };
  need(0, 9);
  if (p[0] != 0x16 || p[5] != 0x01) throw std::runtime_error("not a TLS ClientHello record");
  std::size_t pos = 9 + 2 + 32;  // record header, handshake header, version, random
  need(pos, 1);
  pos += 1 + p[pos];  // session id
  need(pos, 2);
  pos += 2 + u16(pos);  // cipher suites
  need(pos, 1);
  pos += 1 + p[pos];                  // compression methods
  if (pos == n) return std::nullopt;  // no extensions at all
  need(pos, 2);
  const std::size_t end = pos + 2 + u16(pos);
  pos += 2;
  while (pos + 4 <= end) {
    need(pos, 4);
    const std::size_t type = u16(pos);
    const std::size_t len = u16(pos + 2);
    pos += 4;
    need(pos, len);
    if (type == 0) {  // server_name: list length, name type (0 = host_name), name length, name
      need(pos, 5);
      const std::size_t name_len = u16(pos + 3);
      need(pos + 5, name_len);
      return std::string(reinterpret_cast<const char*>(p + pos + 5), name_len);
    }
    pos += len;
  }
  return std::nullopt;
}

}  // namespace getcert::test
