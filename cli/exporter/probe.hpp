#pragma once

// One probe of `getcert serve`: a target and a module in, a ProbeOutcome out. Network targets
// go through fetch() (the same dial, capture and verify as `getcert HOST`); file:// targets
// read certificates and key stores from disk and verify them offline.

#include <chrono>
#include <optional>
#include <string>

#include "exporter/config.hpp"
#include "getcert/error.hpp"
#include "render_prometheus_probe.hpp"

namespace getcert::cli::exporter {

// Why a probe was not run at all; the HTTP layer answers 400 or 403 with the message.
struct ProbeRefusal {
  int http_status = 400;
  std::string message;
};

// The probe's bound: the module's timeout, cut to Prometheus's scrape timeout less a margin
// (so the answer arrives before Prometheus gives up), never below a floor that a probe needs
// to say anything at all.
std::chrono::milliseconds probe_timeout(const Module& module,
                                        std::optional<double> scrape_timeout_seconds);

// Checks `target` against the allow list; an error message when it may not be probed.
std::optional<ProbeRefusal> check_allowed(const std::string& target, const Module& module,
                                          const AllowList& allow);

// Runs the probe (after check_allowed). Never throws for a target's failure: that is the
// outcome's reason. For a file:// target, each path the pattern's glob finds is read only when
// it has no "." or ".." component and matches `allow`'s file patterns itself (when there is an
// allow list): reason "file_not_allowed" when none does.
ProbeOutcome run_probe(const std::string& target, const Module& module,
                       std::chrono::milliseconds timeout, const AllowList* allow = nullptr);

}  // namespace getcert::cli::exporter
