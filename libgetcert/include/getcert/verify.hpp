#pragma once

// Offline verification of a certificate chain: trust store, hostname or IP, validity time and
// purpose. A chain that fails is a result (with reasons), never an error.
// Public header: C++17, no OpenSSL types.

#include <chrono>
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
  // When the server omitted an intermediate, download it from the certificate's Authority
  // Information Access "CA Issuers" URL (http) to complete the chain, as browsers do. The
  // verdict then says the chain is valid only for clients that do the same.
  bool fetch_missing = false;
  // Ask each certificate's OCSP responder (or, lacking one, its CRL distribution point).
  bool check_revocation = false;
  // With check_revocation: an unreachable responder or unknown status fails verification
  // instead of producing a warning.
  bool require_revocation = false;
  // Limit for all HTTP requests made by the options above together.
  std::chrono::milliseconds network_timeout{10000};
  // "sha256/BASE64" SPKI pins; when non-empty, some certificate in the chain must match one.
  std::vector<std::string> pins;
  // A stapled OCSP response (DER) for the leaf, as received in the handshake.
  std::vector<std::uint8_t> ocsp_staple;
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

// Revocation evidence for one certificate of the chain.
struct RevocationCheck {
  int depth = 0;
  std::string source;  // "ocsp-staple", "ocsp", "crl"; "none" when the certificate names no source
  std::string url;     // responder or CRL URL (empty for a staple)
  std::string status;  // "good", "revoked", "unknown" or "error"
  std::string detail;  // why: error text, revocation reason, signature problem
  std::optional<std::int64_t> produced_at;  // OCSP producedAt, or CRL lastUpdate
  std::optional<std::int64_t> this_update;
  std::optional<std::int64_t> next_update;
  std::optional<std::int64_t> revoked_at;
};

struct Verification {
  bool ok = false;  // valid: trusted, name ok, complete chain, pins, not revoked
  // "valid"; "valid_only_with_aia_fetch" (complete only with an intermediate downloaded from
  // the AIA URL, as browsers do; most non-browser clients fail); "incomplete_chain" (an
  // intermediate the server did not send was taken from the local trust store); "invalid".
  std::string verdict = "invalid";
  bool hostname_ok = false;  // leaf matches the name (true when no name was asked for)
  bool trusted = false;      // chain builds to a trust anchor with no chain errors
  std::vector<VerifyProblem> errors;
  std::string trust_store;  // what was trusted: "system (/etc/ssl/certs)", "file:ca.pem", ...
  std::vector<Certificate> verified_chain;         // leaf .. trust anchor; empty unless trusted
  std::vector<Certificate> fetched_intermediates;  // downloaded via AIA (fetch_missing)
  std::vector<RevocationCheck> revocation;         // staple first, then online checks
  std::vector<std::string> warnings;               // problems that do not fail verification
};

// Verifies `presented` (leaf first; the rest are untrusted helpers in any order).
// Fails only when the trust store cannot be loaded (io_error) or presented is empty.
Result<Verification> verify_chain(const std::vector<Certificate>& presented,
                                  const VerifyOptions& options);

}  // namespace getcert
