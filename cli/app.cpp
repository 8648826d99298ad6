#include "app.hpp"

#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <string_view>

#include "command.hpp"
#include "docgen.hpp"
#include "exit_codes.hpp"
#include "getcert/text.hpp"
#include "report.hpp"

#ifndef GETCERT_VERSION
#define GETCERT_VERSION "unknown"
#endif

namespace getcert::cli {
namespace {

std::string version_text() {
  return std::string("getcert ") + GETCERT_VERSION + " (" + OpenSSL_version(OPENSSL_VERSION) + ")";
}

bool is_global_flag(const std::string& a) {
  return a == "--verbose" || a == "--quiet" || a == "-q" ||
         (a.size() >= 2 && a[0] == '-' && a.find_first_not_of('v', 1) == std::string::npos);
}

// The index of the first argument after the global flags (-v, -q); args.size() when none.
std::size_t first_word(const std::vector<std::string>& args) {
  std::size_t first = 1;
  while (first < args.size() && is_global_flag(args[first])) ++first;
  return first;
}

// Which of `commands` a run needs defined. Defining every subcommand's options before parsing
// was about a twentieth of a fetch's CPU time; a run whose first word names a subcommand, or is
// a target (which means fetch, the first command), parses against that subcommand alone.
// Anything else (no word, top-level help, the generated docs, an unknown flag) gets all of
// them, so help and errors list every subcommand as before.
std::vector<std::unique_ptr<Command>> needed_commands(
    const std::vector<std::string>& args, std::vector<std::unique_ptr<Command>> commands) {
  const std::size_t first = first_word(args);
  if (first >= args.size() || args[first].empty() || args[first][0] == '-') return commands;
  auto named = std::find_if(commands.begin(), commands.end(),
                            [&args, first](const auto& c) { return c->name() == args[first]; });
  if (named == commands.end()) named = commands.begin();
  std::vector<std::unique_ptr<Command>> one;
  one.push_back(std::move(*named));
  return one;
}

// `getcert HOST` means `getcert fetch HOST`: insert the default subcommand when the first
// argument after the global flags (-v, -q) names no subcommand and is not a top-level flag.
std::vector<std::string> with_default_command(std::vector<std::string> args, const CLI::App& app) {
  const std::size_t first = first_word(args);
  if (first >= args.size()) return args;
  static const std::vector<std::string> kTopLevel{"-h", "--help", "--version", "--help-all"};
  const std::string& word = args[first];
  const bool top_flag = std::find(kTopLevel.begin(), kTopLevel.end(), word) != kTopLevel.end();
  bool is_subcommand = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    is_subcommand = is_subcommand || sub->check_name(word);
  }
  if (!top_flag && !is_subcommand) {
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(first), "fetch");
  }
  return args;
}

// Log messages carry targets and peers' text too: each goes out as one escaped line, through
// the same writer as errors and warnings ("getcert: debug: ...").
class EscapingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit EscapingSink(Terminal& term) : term_(term) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    report_line(term_, std::string_view(level.data(), level.size()),
                std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override { term_.err.flush(); }

 private:
  Terminal& term_;
};

void setup_logging(Terminal& term, const GlobalOptions& global) {
  auto sink = std::make_shared<EscapingSink>(term);
  auto logger = std::make_shared<spdlog::logger>("getcert", sink);
  logger->set_level(global.verbosity > 0 ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace

std::vector<std::string> as_serve_command(std::vector<std::string> args) {
  if (args.empty()) args.emplace_back("getcert-serve");  // argc 0: no program name
  const std::size_t first = first_word(args);
  if (first >= args.size() || args[first] != "serve") {
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(first), "serve");
  }
  return args;
}

int run(const std::vector<std::string>& raw_args, Terminal& term, const ServeRunner& serve) {
  // Scripts and package checks call `getcert --version` on their own; building every
  // subcommand's options first was a sixth of its instructions. Any other use goes through
  // CLI11, which prints the same text.
  if (raw_args.size() == 2 && raw_args[1] == "--version") {
    term.out << version_text() << '\n';
    return kExitOk;
  }
  CLI::App app("fetch, verify and convert TLS certificates", "getcert");
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  // One line, naming the subcommand whose --help explains the fix.
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    std::string path = "getcert";
    const CLI::App* current = top;
    for (auto subs = current->get_subcommands(); !subs.empty(); subs = current->get_subcommands()) {
      current = subs.front();
      path += " " + current->get_name();
    }
    // e.what() may quote an argument, and arguments can hold anything: escaped, one line.
    return "getcert: error: " + escape_untrusted(e.what()) + " (see '" + escape_untrusted(path) +
           " --help')\n";
  });
  GlobalOptions global;
  app.add_flag("-v,--verbose", global.verbosity,
               "Show low-level detail: OpenSSL errors, and each step of a fetch with its duration")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("-q,--quiet", global.quiet, "No verdict line on a terminal");
  app.footer(
      "Examples:\n"
      "  getcert example.com                         fetch, verify, print the PEM chain\n"
      "  getcert --select root grpc.internal:443     the root a gRPC client should trust\n"
      "  getcert p12 topem bundle.p12 --password-env P12_PASSWORD --out-dir tls/\n"
      "  getcert show cert.pem --verify --host api.example.com\n"
      "Run 'getcert SUBCOMMAND --help' for a subcommand's options and examples.\n"
      "Exit codes: 0 ok, 2 usage, 3 network/timeout, 4 TLS handshake, 5 verification "
      "failed,\n  6 expiring soon, 7 wrong password, 8 malformed input, 9 unsupported, "
      "10 output exists, 11 I/O error,\n  12 not in this build (serve in the static binary)");

  // fetch first: it is the default subcommand.
  std::vector<std::unique_ptr<Command>> all;
  all.push_back(make_fetch_command());
  all.push_back(make_p12_command());
  all.push_back(make_show_command());
  all.push_back(make_serve_command(serve));
  const std::vector<std::unique_ptr<Command>> commands = needed_commands(raw_args, std::move(all));
  std::vector<std::pair<CLI::App*, Command*>> table;
  for (auto& c : commands) {
    CLI::App* sub = c->add_to(app);
    sub->fallthrough();
    table.emplace_back(sub, c.get());
  }

  // Build-time generation of the man page, completion and docs/cli.md from these very definitions.
  if (raw_args.size() == 2 && raw_args[1] == "--generate-man") {
    term.out << man_page(app, version_text());
    return kExitOk;
  }
  if (raw_args.size() == 2 && raw_args[1] == "--generate-bash-completion") {
    term.out << bash_completion(app);
    return kExitOk;
  }
  if (raw_args.size() == 2 && raw_args[1] == "--generate-markdown") {
    term.out << markdown_reference(app);
    return kExitOk;
  }

  const std::vector<std::string> args = with_default_command(raw_args, app);
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e, term.out, term.err);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  setup_logging(term, global);
  for (const auto& [sub, command] : table) {
    if (sub->parsed()) return finish_output(term, global, command->run(term, global));
  }
  return kExitUsage;
}

}  // namespace getcert::cli
