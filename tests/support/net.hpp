#pragma once

// Loopback ports for tests.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
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

// The listening half of the in-process servers (HostilePeer, HttpServer): a socket on
// 127.0.0.1, bound before the constructor returns, and a thread that accepts connections one
// after another and hands each to the server. stop() wakes every wait made through
// wait_readable() or on wake_fd(), joins the thread and closes the connections held open.
class LoopbackListener {
 public:
  // port 0: a kernel-chosen port (no race). Otherwise that port, waiting up to 10 s for it to
  // become free (the test PKI's fixed ports, which need the pki_fixed_ports lock). Throws
  // std::runtime_error naming `server_name`.
  LoopbackListener(const char* server_name, std::uint16_t port);
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  ~LoopbackListener();

  // Starts the accept thread; on_accept(fd) owns fd: it closes it or passes it to hold().
  void start(std::function<void(int fd)> on_accept);
  // Idempotent. A server calls it first in its destructor, while what on_accept uses exists.
  void stop();

  std::uint16_t port() const noexcept { return port_; }
  // Waits until fd is readable (or hung up) within timeout_ms (-1: forever); false on timeout
  // or once stop() was called.
  bool wait_readable(int fd, int timeout_ms);
  // Readable once stop() was called: for the server's own polls (writes, pauses).
  int wake_fd() const noexcept { return wake_fds_[0]; }
  // Keeps a connection open, silent, until stop().
  void hold(int fd);
  // Connections accepted before now (not counting probes): see AcceptLog::settle.
  int connections_settled() { return accepted_.settle(port_, server_name_); }

 private:
  const char* server_name_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  std::mutex held_mutex_;
  std::vector<int> held_;
  AcceptLog accepted_;
  std::thread thread_;
  bool stopped_ = false;
};

// Connects until host:port accepts a TCP connection or `limit` passes; gives up early when
// `server` (if given) has exited. With `server`, the listening socket must also be held by it
// or one of its descendants (checked through /proc), so a port another process took between
// free_port() and the server's bind is not mistaken for the server: the caller retries.
bool wait_for_port(const std::string& host, std::uint16_t port, std::chrono::milliseconds limit,
                   Process* server = nullptr);

}  // namespace getcert::test
