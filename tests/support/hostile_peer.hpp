#pragma once

// In-process TCP peers that misbehave the way real non-TLS or broken services do. Each binds
// 127.0.0.1 before the constructor returns (a kernel-chosen port, so no race, unless a fixed
// one is asked for), serves connections one after another on its own thread, and stops and
// joins in the destructor, even while it is flooding, dripping or stalling a client.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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

  // One step of a scripted conversation (HTTP servers, STARTTLS servers, proxies...).
  struct Step {
    enum class Kind {
      read_until,     // read until `bytes` (e.g. "\r\n\r\n", "\n") has arrived
      send,           // send `bytes` in one write, after `delay`
      send_bytewise,  // send `bytes` one byte per write (with `delay` between bytes)
      flood,          // send `bytes` over and over until the client goes away
      drip,           // send `bytes` cyclically, one byte every `delay`, until the client goes away
      hold,           // keep the connection open and silent until the peer is destroyed
    };
    Kind kind;
    std::string bytes;
    std::chrono::milliseconds delay{0};
  };
  using Script = std::vector<Step>;

  explicit HostilePeer(Behavior behavior);
  // Plays `script` on every connection, then closes it (after the client did). port 0: a
  // kernel-chosen port; otherwise that port, waiting up to 10 s for it to become free (the
  // test PKI's fixed AIA/OCSP ports: such tests need the pki_fixed_ports lock).
  explicit HostilePeer(Script script, std::uint16_t port = 0);
  HostilePeer(const HostilePeer&) = delete;
  HostilePeer& operator=(const HostilePeer&) = delete;
  ~HostilePeer();

  std::uint16_t port() const noexcept { return listener_.port(); }
  // Connections accepted so far.
  int connections() const noexcept { return connections_.load(); }
  // When the first connection was accepted (nullopt before): a client's deadline is already
  // running then, so "gave up within the limit" can be measured from here.
  std::optional<std::chrono::steady_clock::time_point> first_accepted() const;
  // Connections made before now (not counting its own probes): makes a probe connection and
  // waits until it is accepted, so everything that connected earlier has been counted.
  int connections_settled();
  // The first bytes each client sent (its ClientHello, for a TLS client).
  std::vector<std::string> client_hellos() const;

 private:
  void note_accepted();
  void handle(int fd);
  // Plays the script; false when the connection was handed to listener_.hold() (stays open).
  bool play(int fd);
  // Sends all of data unless the client went away or stop was asked; false then.
  bool send_all(int fd, std::string_view data);
  // Reads until one whole TLS record (or 4 KiB of anything) arrived, the peer closed, or stop.
  std::string read_hello(int fd);
  // Waits until fd is readable or the peer is being destroyed; false then or on timeout.
  bool wait_readable(int fd, int timeout_ms) { return listener_.wait_readable(fd, timeout_ms); }

  Behavior behavior_ = Behavior::silent;
  Script script_;
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> hellos_;
  std::optional<std::chrono::steady_clock::time_point> first_accepted_;
  LoopbackListener listener_;  // last: stopped before the state its thread uses goes away
};

// The server_name (SNI) a TLS ClientHello carries, or nullopt when it sends none.
// Throws std::runtime_error when `hello` is not a ClientHello record.
std::optional<std::string> sni_of_client_hello(const std::string& hello);

}  // namespace getcert::test
