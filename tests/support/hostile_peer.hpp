#pragma once

// In-process TCP peers that misbehave the way real non-TLS or broken services do. Each binds
// 127.0.0.1 on a kernel-chosen port before the constructor returns (no port race), serves on
// its own thread, and stops and joins in the destructor.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/net.hpp"

namespace getcert::test {

class HostilePeer {
 public:
  enum class Behavior {
    silent,             // accepts, reads, never answers (a stalled server)
    plain_http,         // reads the ClientHello, answers "HTTP/1.1 400 Bad Request"
    close_after_hello,  // reads the ClientHello, then closes
    garbage,            // reads the ClientHello, answers with bytes that are not TLS
  };

  explicit HostilePeer(Behavior behavior);
  HostilePeer(const HostilePeer&) = delete;
  HostilePeer& operator=(const HostilePeer&) = delete;
  ~HostilePeer();

  std::uint16_t port() const noexcept { return port_; }
  // Connections accepted so far.
  int connections() const noexcept { return connections_.load(); }
  // Connections made before now (not counting its own probes): makes a probe connection and
  // waits until it is accepted, so everything that connected earlier has been counted.
  int connections_settled();
  // The first bytes each client sent (its ClientHello, for a TLS client).
  std::vector<std::string> client_hellos() const;

 private:
  void serve();
  void handle(int fd);
  // Reads until one whole TLS record (or 4 KiB of anything) arrived, the peer closed, or stop.
  std::string read_hello(int fd);
  // Waits until fd is readable or stop() was called; false on stop or timeout.
  bool wait_readable(int fd, int timeout_ms);

  Behavior behavior_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> hellos_;
  std::vector<int> held_;  // connections a silent peer keeps open
  AcceptLog accepted_;
  std::thread thread_;
};

// The server_name (SNI) a TLS ClientHello carries, or nullopt when it sends none.
// Throws std::runtime_error when `hello` is not a ClientHello record.
std::optional<std::string> sni_of_client_hello(const std::string& hello);

}  // namespace getcert::test
