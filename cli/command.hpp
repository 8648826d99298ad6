#pragma once

// A subcommand: registers its options on the CLI11 app and runs once they are parsed.

#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "terminal.hpp"

namespace getcert::cli {

// Options shared by every subcommand.
struct GlobalOptions {
  int verbosity = 0;  // -v: show low-level detail (OpenSSL errors) under each error
  bool quiet = false;
};

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand (and its options) to `app`; returns it.
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Runs after a successful parse; returns the process exit code.
  virtual int run(Terminal& term, const GlobalOptions& global) = 0;
};

std::unique_ptr<Command> make_fetch_command();
std::unique_ptr<Command> make_p12_command();
std::unique_ptr<Command> make_show_command();

}  // namespace getcert::cli
