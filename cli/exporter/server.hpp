#pragma once

// The HTTP side of `getcert serve`: /probe, /metrics, / and /-/reload on cpp-httplib, with a
// bounded pool of threads, a bound on probes in flight (503 past it), reload on SIGHUP and a
// graceful stop on SIGTERM.

#include <cstdint>
#include <string>

#include "serve.hpp"
#include "terminal.hpp"

namespace getcert::cli::exporter {

// Loads the config, binds, serves until SIGTERM or SIGINT; returns the process exit code
// (2 bad config or listen address, 3 cannot bind, 0 after a graceful stop).
int serve(const ServeOptions& options, Terminal& term);

// --check-config: loads and checks the config and the web config; prints what it found.
int check_config(const ServeOptions& options, Terminal& term);

// getcert-serve's ServeRunner: check_config() with --check-config, serve() otherwise.
int run(const ServeOptions& options, Terminal& term);

}  // namespace getcert::cli::exporter
