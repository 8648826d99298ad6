#pragma once

// What `getcert serve` answers on /probe: the families `-o prometheus` writes (see
// render_prometheus.hpp), for one target and without the target label (Prometheus adds the
// instance through relabelling, as with blackbox_exporter), plus the facts a probe has that a
// list run does not summarise: both chains certificate by certificate, the verdict and its
// problem codes, revocation, stapling, the client-certificate request and the chain issues.
// A certificate that is expired, untrusted or for another name still has all of its series.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "getcert/fetch.hpp"

namespace getcert::cli {

// The certificates of one file of a file:// target, and how they verified (no name is checked:
// a file has no host).
struct FileChain {
  std::string path;
  std::vector<Certificate> certificates;  // in file order (a key store: each identity's chain)
  std::optional<Verification> verification;
};

struct ProbeOutcome {
  bool success = false;
  // Why success is 0, as one stable snake_case word: an Errc ("timeout", "connect_failed"), the
  // first ProblemCode of a failed verification ("expired", "hostname_mismatch"), a Verdict
  // ("incomplete_chain"), "expires_soon" or "no_certificate"; "ok" on success.
  std::string reason = "ok";
  std::chrono::microseconds duration{0};
  std::vector<StepTiming> timings;
  std::optional<FetchResult> fetched;  // network targets that completed a handshake
  std::vector<FileChain> files;        // file:// targets
};

// The exposition text of one probe (text format 0.0.4).
std::string render_probe_metrics(const ProbeOutcome& outcome);

}  // namespace getcert::cli
