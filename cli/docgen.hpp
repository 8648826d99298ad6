#pragma once

// The man page and the bash completion are generated from the CLI11 definitions that parse
// the command line, so they cannot drift from `--help`.

#include <string>

#include <CLI/CLI.hpp>

namespace getcert::cli {

std::string man_page(const CLI::App& app, const std::string& version);
std::string bash_completion(const CLI::App& app);

}  // namespace getcert::cli
