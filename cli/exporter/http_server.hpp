#pragma once

// The exporter's HTTP/1.1 server: one thread reads and writes every connection with epoll,
// and a bounded pool of workers runs only complete requests. A slow or idle client costs a
// descriptor and a few hundred bytes, never a thread, so 1,000 slow clients or 10,000 idle
// keep-alive connections leave the probes answering (Go's net/http gives each connection a
// goroutine; this is the C++ shape of the same guarantee).
//
// Deadlines are per request, not per read: a client has `request_timeout` from its first byte
// (or from connecting, or from the end of its TLS handshake) to send the whole request, a TLS
// handshake has `request_timeout` too, a keep-alive connection may idle for `idle_timeout`
// between requests, and an answer must be taken within `write_timeout`. Connections are capped:
// past the cap the oldest idle one is closed, and if none is idle the new one is.
//
// Requests on one connection are answered in order (pipelining), one at a time. A request that
// cannot be framed (http_request.hpp) is answered with its status and the connection closed.

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exporter/http_request.hpp"
#include "getcert/error.hpp"

namespace getcert::cli::exporter::http {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond the framing ones
};

struct ServerOptions {
  std::size_t workers = 8;
  std::size_t max_connections = 16384;  // also held below the descriptor limit
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds idle_timeout{120000};
  std::chrono::milliseconds write_timeout{10000};
  std::size_t max_requests_per_connection = 1000;
  Limits limits;
  SSL_CTX* tls = nullptr;  // owned by the caller, outlives the server; nullptr: plain HTTP
};

// Runs on a worker thread, for a complete request.
using Handler = std::function<Response(const Request&)>;
// Called for every answer written, on the event thread: the request (nullptr when it did not
// parse) and the status.
using AnswerLog = std::function<void(const Request*, int status)>;

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens (backlog SOMAXCONN). Errors carry errno's text.
  Result<void> bind(const std::string& host, int port);
  // Serves until stop(): then stops accepting, closes connections between requests, lets the
  // requests being answered finish (bounded by write_timeout), joins the workers, returns.
  void run(Handler handler, AnswerLog log);
  // From any thread, any time (before run() too: run() then returns at once).
  void stop();

  // The port bound (bind() with port 0 lets the kernel choose); 0 before bind().
  int port() const;
  // Connections open now (for /metrics and tests).
  std::size_t connections() const { return open_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::size_t> open_{0};
};

}  // namespace getcert::cli::exporter::http
