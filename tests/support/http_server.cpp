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

HttpServer::HttpServer(std::uint16_t port, Behavior behavior)
    : behavior_(behavior), listener_("HttpServer", port) {
  listener_.start([this](int fd) {
    if (behavior_ == Behavior::silent) {
      listener_.hold(fd);
      return;
    }
    handle(fd);
    ::close(fd);
  });
}

HttpServer::~HttpServer() { listener_.stop(); }

void HttpServer::serve(const std::string& path, std::string body) {
  const std::lock_guard<std::mutex> lock(mutex_);
  bodies_[path] = std::move(body);
}

std::vector<std::string> HttpServer::requests() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

int HttpServer::connections_settled() { return listener_.connections_settled(); }

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
    if (!listener_.wait_readable(fd, 5000)) return;
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
  while (listener_.wait_readable(fd, 2000) && ::recv(fd, buf, sizeof buf, 0) > 0) {
  }
}

}  // namespace getcert::test
