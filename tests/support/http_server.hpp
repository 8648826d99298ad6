#pragma once

// An in-process HTTP/1.0 server on a FIXED loopback port, for the URLs baked into the test PKI
// (AIA caIssuers and CRL at http://127.0.0.1:18080/). It records every request, so a test can
// prove that no request was made, and it can serve bytes that are not what the URL promises.
//
// The port is fixed, so two of these (or python -m http.server) cannot run at once: every test
// that starts one must carry the ctest RESOURCE_LOCK "pki_fixed_ports" (see tests/CMakeLists.txt).

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "support/net.hpp"

namespace getcert::test {

// The port of the PKI's AIA caIssuers and CRL URLs, and of its OCSP responder URL.
inline constexpr std::uint16_t kPkiHttpPort = 18080;
inline constexpr std::uint16_t kPkiOcspPort = 18081;

class HttpServer {
 public:
  enum class Behavior {
    serve,   // answers each request with the registered body (200) or 404
    silent,  // accepts and never answers (a stalled server)
  };

  // Listens on 127.0.0.1:port before returning; waits up to 10 s for the port to become free
  // (a previous test's server may still be closing), then throws std::runtime_error.
  explicit HttpServer(std::uint16_t port = kPkiHttpPort, Behavior behavior = Behavior::serve);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();

  // Serves `body` at `path` ("/intermediate.der"); replaces what was there.
  void serve(const std::string& path, std::string body);

  std::uint16_t port() const noexcept { return listener_.port(); }
  // Request lines received so far ("GET /intermediate.der"), in order.
  std::vector<std::string> requests() const;
  // Connections made before now (not counting its own probes): connects a probe and waits
  // until it is accepted; connections are accepted in order, so earlier ones are counted.
  int connections_settled();

 private:
  void handle(int fd);

  Behavior behavior_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> bodies_;
  std::vector<std::string> requests_;
  LoopbackListener listener_;  // last: stopped before the state its thread uses goes away
};

}  // namespace getcert::test
