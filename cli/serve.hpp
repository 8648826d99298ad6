#pragma once

// `getcert serve` lives in its own executable, getcert-serve: its HTTP server, YAML config,
// bcrypt and systemd libraries would otherwise be loaded (mapped and relocated) by every
// getcert run, `getcert --version` and a single fetch included. The subcommand's options stay
// in this library, so both executables parse one command line; what runs once it is parsed is
// the executable's choice (a ServeRunner).

#include <functional>
#include <string>
#include <vector>

#include "terminal.hpp"

namespace getcert::cli {

struct ServeOptions {
  std::string config_path;  // empty: the built-in default module only
  std::string listen = ":9798";
  std::size_t max_concurrent_probes = 64;
  bool log_json = false;
  std::string web_config_path;    // exporter-toolkit's web config: TLS and basic auth
  bool check_only = false;        // --check-config: check the files and exit
  bool enable_lifecycle = false;  // --web.enable-lifecycle: POST /-/reload is served
};

// What `serve` runs after a successful parse; returns the exit code. getcert-serve runs the
// exporter; getcert execs getcert-serve. Empty: this build has no exporter (the static one).
using ServeRunner = std::function<int(const ServeOptions&, Terminal&)>;

// getcert's runner: replaces this process (same pid, so systemd's Type=notify, signals and the
// process group still apply; standard streams inherited) with getcert-serve, given `args`, the
// original command line. Looks next to this executable, then in the installed libexec
// directory. Returns only when neither can be run: one line on stderr, exit 12.
int exec_getcert_serve(const std::vector<std::string>& args, Terminal& term);

// getcert-serve's command line read as getcert's: `serve` inserted after the global flags (-v,
// -q) unless it is already there (getcert passes its own command line on), so
// `getcert-serve --help` shows serve's help.
std::vector<std::string> as_serve_command(std::vector<std::string> args);

}  // namespace getcert::cli
