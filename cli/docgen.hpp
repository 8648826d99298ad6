#pragma once

// The man page, the bash completion and docs/cli.md are generated from the CLI11 definitions
// that parse the command line, so they cannot drift from `--help`.

#include <string>

#include "cli11_fwd.hpp"

namespace getcert::cli {

std::string man_page(const CLI::App& app, const std::string& version);
std::string bash_completion(const CLI::App& app);
// docs/cli.md: every subcommand and option as Markdown. It names no version (the committed copy
// is compared with a fresh one in every build, on any machine and OpenSSL).
std::string markdown_reference(const CLI::App& app);

}  // namespace getcert::cli
