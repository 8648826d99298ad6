#pragma once

// The test PKI's OCSP responder: `openssl ocsp -index ocsp-index.txt` signing as the
// intermediate, on the FIXED port the PKI's leaves name (http://127.0.0.1:18081). Tests that
// start it must carry the ctest RESOURCE_LOCK "pki_fixed_ports" (see tests/CMakeLists.txt).

#include <cstdint>
#include <string>

#include "support/http_server.hpp"
#include "support/process.hpp"

namespace getcert::test {

class OcspResponder {
 public:
  // Ready to answer when the constructor returns; throws std::runtime_error when it cannot
  // start within 10 s. Killed (and reaped) by the destructor.
  explicit OcspResponder(std::uint16_t port = kPkiOcspPort);
  OcspResponder(const OcspResponder&) = delete;
  OcspResponder& operator=(const OcspResponder&) = delete;
  ~OcspResponder() = default;

  std::string log() const;

 private:
  Process process_;
};

}  // namespace getcert::test
