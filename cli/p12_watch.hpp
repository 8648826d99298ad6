#pragma once

// `getcert p12 topem --watch`: keep PEM files in sync with key stores that get rotated. The
// loop is here; what an update writes is topem's (p12_command.cpp).

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "global_options.hpp"
#include "terminal.hpp"

namespace getcert::cli {

struct WatchLoopOptions {
  std::vector<std::string> watched;  // key stores and password files; symlinks are followed
  std::chrono::milliseconds interval{1000};
  std::string exec;  // run with /bin/sh -c after each successful update; "" = none
  // Environment variables the hook does not inherit (those holding the store's passwords).
  std::vector<std::string> hidden_env;
  bool quiet = false;
};

// Runs `update` now, and again each time a watched file changes (checked every interval, one
// stat per file). An update that fails has written nothing (topem decodes everything before it
// writes); its error was reported by `update`, and the loop says the previous files stay. The
// first update failing ends the loop with its exit code: there is nothing to keep in sync yet.
// SIGTERM or SIGINT end the loop between updates, with exit code 0; a hook running then gets
// SIGTERM, and SIGKILL 5 s later.
int run_watch_loop(Terminal& term, const WatchLoopOptions& options,
                   const std::function<int()>& update);

}  // namespace getcert::cli
