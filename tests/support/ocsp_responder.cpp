#include "support/ocsp_responder.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "support/files.hpp"

namespace getcert::test {
namespace {

Process start(std::uint16_t port) {
  SpawnOptions options;
  options.die_with_parent = true;
  return Process::spawn({GETCERT_TEST_OPENSSL, "ocsp", "-index", pki("ocsp-index.txt"), "-CA",
                         pki("intermediate.pem"), "-rsigner", pki("intermediate.pem"), "-rkey",
                         pki("intermediate.key"), "-port", std::to_string(port)},
                        options);
}

}  // namespace

// Readiness comes from the responder's own "waiting" line, never from a TCP probe: OpenSSL
// 3.0's responder spins at full CPU, answering nobody, after a client connects and closes
// without sending a request.
OcspResponder::OcspResponder(std::uint16_t port) : process_(start(port)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    if (log().find("waiting for OCSP client connections") != std::string::npos) return;
    if (!process_.running()) {
      // The port may still be held by a previous responder that is going away.
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      process_ = start(port);
      continue;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string last = log();
  process_.kill();
  throw std::runtime_error("openssl ocsp did not start on port " + std::to_string(port) + ":\n" +
                           last);
}

std::string OcspResponder::log() const { return process_.stdout_text() + process_.stderr_text(); }

}  // namespace getcert::test
