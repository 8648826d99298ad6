#include "support/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace getcert::test {
namespace {

constexpr std::size_t kMaxRequest = std::size_t{64} * 1024;

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sin;
}

void send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

std::size_t content_length(const std::string& head) {
  static const std::string kName = "\r\ncontent-length:";
  std::string lower = head;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto pos = lower.find(kName);
  if (pos == std::string::npos) return 0;
  return static_cast<std::size_t>(std::strtoul(head.c_str() + pos + kName.size(), nullptr, 10));
}

}  // namespace

HttpServer::HttpServer(std::uint16_t port, Behavior behavior) : behavior_(behavior) {
  if (::pipe2(wake_fds_, O_CLOEXEC) != 0) throw std::runtime_error("HttpServer: pipe2 failed");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string why;
  for (;;) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sin = loopback(port);
    if (listen_fd_ >= 0 && ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0 &&
        ::listen(listen_fd_, 16) == 0) {
      break;
    }
    why = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(wake_fds_[0]);
      ::close(wake_fds_[1]);
      throw std::runtime_error("HttpServer: cannot listen on 127.0.0.1:" + std::to_string(port) +
                               " (" + why +
                               "); is a test without the pki_fixed_ports lock, "
                               "or a stray server, using it?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  port_ = port;
  thread_ = std::thread([this] { run(); });
}

HttpServer::~HttpServer() {
  const char byte = 'x';
  (void)!::write(wake_fds_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  for (const int fd : held_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_fds_[0]);
  ::close(wake_fds_[1]);
}

void HttpServer::serve(const std::string& path, std::string body) {
  const std::lock_guard<std::mutex> lock(mutex_);
  bodies_[path] = std::move(body);
}

std::vector<std::string> HttpServer::requests() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

int HttpServer::connections_settled() { return accepted_.settle(port_, "HttpServer"); }

bool HttpServer::wait_readable(int fd, int timeout_ms) {
  return wait_readable_unless_woken(fd, wake_fds_[0], timeout_ms);
}

void HttpServer::run() {
  while (wait_readable(listen_fd_, -1)) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    accepted_.record(ntohs(peer.sin_port));
    if (behavior_ == Behavior::silent) {
      const std::lock_guard<std::mutex> lock(mutex_);
      held_.push_back(fd);
      continue;
    }
    handle(fd);
    ::close(fd);
  }
}

void HttpServer::handle(int fd) {
  std::string data;
  char buf[4096];
  std::size_t head_end = std::string::npos;
  while (data.size() < kMaxRequest) {
    head_end = data.find("\r\n\r\n");
    if (head_end != std::string::npos &&
        data.size() >= head_end + 4 + content_length(data.substr(0, head_end + 2))) {
      break;
    }
    if (!wait_readable(fd, 5000)) return;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  if (head_end == std::string::npos) return;  // a probe, or a client that gave up
  const std::string line = data.substr(0, data.find("\r\n"));
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 + 1);
  const std::string path = sp1 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string response;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(line.substr(0, sp2));
    const auto it = bodies_.find(path);
    if (it == bodies_.end()) {
      response = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    } else {
      response = "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                 std::to_string(it->second.size()) + "\r\nConnection: close\r\n\r\n" + it->second;
    }
  }
  send_all(fd, response);
  // Close only after the client did, so our FIN never races its last read.
  ::shutdown(fd, SHUT_WR);
  while (wait_readable(fd, 2000) && ::recv(fd, buf, sizeof buf, 0) > 0) {
  }
}

}  // namespace getcert::test
