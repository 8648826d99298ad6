#pragma once

#include <string>
#include <vector>

#include "terminal.hpp"

namespace getcert::cli {

// The whole CLI: parses args (args[0] is the program name), runs the subcommand, returns the
// exit code. main() only forwards here, so tests drive the CLI with in-memory streams.
int run(const std::vector<std::string>& args, Terminal& term);

}  // namespace getcert::cli
