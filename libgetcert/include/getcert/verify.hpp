#pragma once

// Offline verification of a certificate chain: trust store, hostname or IP, validity time and
// purpose. A chain that fails is a result (with reasons), never an error.
// Public header: C++17, no OpenSSL types.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "getcert/certificate.hpp"
#include "getcert/error.hpp"

namespace getcert {

enum class Purpose { server, client, any };

struct TrustOptions {
  // Each replaces the system trust store when non-empty; both may be given.
  std::string ca_file;  // PEM bundle
  std::string ca_dir;   // OpenSSL hashed directory (c_rehash / openssl rehash)
};

struct VerifyOptions {
  TrustOptions trust;
  // DNS name or IP literal the leaf must be valid for; empty = skip the name check.
  std::string name;
  // Verify as of this time (seconds since the epoch); nullopt = now.
  std::optional<std::int64_t> at_time;
  Purpose purpose = Purpose::server;
};

struct VerifyProblem {
  int depth = 0;       // 0 = leaf, 1 = its issuer, ...
  std::string code;    // stable snake_case code, e.g. "expired", "hostname_mismatch"
  std::string reason;  // plain-language sentence for humans
};

struct Verification {
  bool ok = false;           // trusted && hostname_ok
  bool hostname_ok = false;  // leaf matches the name (true when no name was asked for)
  bool trusted = false;      // chain builds to a trust anchor with no chain errors
  std::vector<VerifyProblem> errors;
  std::string trust_store;   // what was trusted: "system (/etc/ssl/certs)", "file:ca.pem", ...
  std::vector<Certificate> verified_chain;  // leaf .. trust anchor; empty unless trusted
};

// Verifies `presented` (leaf first; the rest are untrusted helpers in any order).
// Fails only when the trust store cannot be loaded (io_error) or presented is empty.
Result<Verification> verify_chain(const std::vector<Certificate>& presented,
                                  const VerifyOptions& options);

}  // namespace getcert
