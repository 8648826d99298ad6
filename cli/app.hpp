#pragma once

#include <string>
#include <vector>

#include "serve.hpp"
#include "terminal.hpp"

namespace getcert::cli {

// The whole CLI: parses args (args[0] is the program name), runs the subcommand, returns the
// exit code. main() only forwards here, so tests drive the CLI with in-memory streams. `serve`
// is what the serve subcommand runs (serve.hpp); empty, it says it is not in this build.
int run(const std::vector<std::string>& args, Terminal& term, const ServeRunner& serve = {});

// The body of both executables' main(): standard streams on the process's descriptors,
// SIGPIPE ignored, run(), and the exit. Returns only in builds whose sanitizers must see exit().
int run_main(const std::vector<std::string>& args, const ServeRunner& serve);

}  // namespace getcert::cli
