#pragma once

// Loopback ports for tests.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace getcert::test {

class Process;

// A port the kernel just handed out on 127.0.0.1 (and that was free on ::1 too, when IPv6
// loopback exists). Another process may still grab it: servers retry with a fresh port.
std::uint16_t free_port();

// A port nothing listens on: bound, then closed, so a connect is refused at once.
std::uint16_t closed_port();

// True when a socket can bind ::1 (IPv6 loopback configured).
bool ipv6_loopback_available();

// Waits until fd is readable (or hung up) within timeout_ms (-1: forever); false on timeout or
// when wake_fd became readable first (how in-process servers are told to stop).
bool wait_readable_unless_woken(int fd, int wake_fd, int timeout_ms);

// Which connections an in-process server has accepted, in accept order, so a test can wait
// until everything that connected before "now" has been seen (accept is FIFO).
class AcceptLog {
 public:
  // Called by the server for each accepted connection, with the client's source port.
  void record(std::uint16_t client_port);
  // Connects a probe to 127.0.0.1:server_port and waits (up to 10 s) until the server
  // recorded it; returns how many non-probe connections came before. Throws on failure.
  int settle(std::uint16_t server_port, const char* server_name);

 private:
  std::mutex mutex_;
  std::vector<std::uint16_t> client_ports_;
  int probes_ = 0;
};

// Connects until host:port accepts a TCP connection or `limit` passes; gives up early when
// `server` (if given) has exited.
bool wait_for_port(const std::string& host, std::uint16_t port, std::chrono::milliseconds limit,
                   Process* server = nullptr);

}  // namespace getcert::test
